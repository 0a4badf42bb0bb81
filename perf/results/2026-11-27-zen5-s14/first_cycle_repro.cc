// The first cycle of 10 host-stream launches in a fresh process, 1 rank (session 14): build with
//   g++ -O2 -Iinclude first_cycle_repro.cc -o fl -Lbuild/lib -lchorus -Wl,-rpath,$PWD/build/lib
// and run it several times; each cycle prints us per launch (f: minor page faults, c: context switches in it).
#include <sys/resource.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
static long flt() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}
static long csw() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_nvcsw + u.ru_nivcsw;
}
#include "chorus/chorus.h"
int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1;
  chorusComm_t comm;
  chorusCommInitAll(&comm, 1, nullptr);
  chorusStream_t s;
  chorusStreamCreate(&s);
  std::vector<float> in(32 * n, 1.f), out(32 * n);
  for (int w = 0; w < 2; ++w) chorusAllGather(in.data(), out.data(), 32, chorusFloat32, comm, s);
  chorusStreamSynchronize(s);
  for (int c = 0; c < 5; ++c) {
    long f0 = flt(), c0 = csw();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 10; ++i) chorusAllGather(in.data(), out.data(), 32, chorusFloat32, comm, s);
    chorusStreamSynchronize(s);
    auto t1 = std::chrono::steady_clock::now();
    printf("%.2f(f%ld,c%ld) ", std::chrono::duration<double, std::micro>(t1 - t0).count() / 10, flt() - f0, csw() - c0);
  }
  printf("\n");
}
