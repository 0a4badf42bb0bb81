// A loop of six independent integer chains (about four instructions per cycle): run on CPU 1 while a benchmark runs
// on CPU 0, it slows that benchmark when the two vCPUs are hardware threads of one core (smt_probe.sh).
//
//   g++ -O2 busy.cc -o busy && taskset -c 1 ./busy ITERATIONS
#include <cstdint>
#include <cstdio>
#include <cstdlib>
int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 2000000000L;
  uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6;
  for (long i = 0; i < n; ++i) {
    a += i;
    b ^= i;
    c += b;
    d ^= a;
    e += 3;
    f ^= e;
    asm volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
  }
  printf("%lu\n", (unsigned long)(a ^ b ^ c ^ d ^ e ^ f));
}
