// The floor of a 2-rank exchange of one cache line per step on this machine: two threads pinned to CPU 0 and CPU 1,
// each doing `work` iterations of busy arithmetic per step (standing in for a library's software per call), then
// storing its step number into its own line and polling the other thread's. Prints the work alone and the period:
// the period's excess over the work is what the line's trip between the cores adds to each step.
//
//   g++ -O2 -pthread exchange.cc -o exchange && for w in 0 100 300 600; do ./exchange $w; done
#include <immintrin.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

struct alignas(64) Line {
  std::atomic<uint64_t> seq{0};
};
Line lines[2][64];  // each thread's ring of lines, as a mailbox's

double nsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int work = argc > 1 ? atoi(argv[1]) : 0;
  constexpr int kSteps = 200000;
  double period[2] = {0, 0};
  auto run = [&](int me) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(me, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    volatile uint64_t sink = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 1; i <= kSteps; ++i) {
      for (int k = 0; k < work; ++k) sink = sink + static_cast<uint64_t>(k) * k;
      lines[me][i % 64].seq.store(i, std::memory_order_release);
      while (lines[1 - me][i % 64].seq.load(std::memory_order_acquire) != static_cast<uint64_t>(i)) _mm_pause();
    }
    period[me] = nsSince(t0) / kSteps;
  };
  std::thread a(run, 0), b(run, 1);
  a.join();
  b.join();
  volatile uint64_t sink = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kSteps; ++i) {
    for (int k = 0; k < work; ++k) sink = sink + static_cast<uint64_t>(k) * k;
  }
  const double alone = nsSince(t0) / kSteps;
  printf("work %d: alone %.0f ns per step, exchanging %.0f ns (the trip adds %.0f)\n", work, alone, period[0],
         period[0] - alone);
  return 0;
}
