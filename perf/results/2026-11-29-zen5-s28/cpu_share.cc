// Whether the two vCPUs share a core at the moment: the same arithmetic loop on CPU <cpu>, alone and then with a copy
// of itself on the other CPU at once. Equal times: each vCPU had a core; longer together: they were two hardware
// threads of one core (or the host ran both on one).
//
//   g++ -O2 cpu_share.cc -o cpu_share && ./cpu_share 0 && (./cpu_share 0 & ./cpu_share 1; wait)
#include <sched.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const int cpu = argc > 1 ? atoi(argv[1]) : 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof(set), &set);
  constexpr long kIters = 300000000L;
  volatile unsigned long sink = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < kIters; ++i) sink = sink + static_cast<unsigned long>(i) * i;
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  printf("cpu%d %.2f ns per iteration\n", cpu, ns / kIters);
  return 0;
}
