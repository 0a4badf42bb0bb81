// A library-free model of a 2-rank small broadcast over a mailbox ring (transport/fifo.h's layout: 64 lines of 576
// bytes, a sequence word stored last, an acknowledgement counter read by the producer only when the ring is full). A
// producer thread pinned to CPU 0 posts 8-byte messages, a consumer pinned to CPU 1 reads them; each side does `work`
// nanoseconds of arithmetic per message (the stand-in for a library's software per call). Each run maps a fresh ring
// and prints five timings of 1,000 messages each, as broadcast_perf -w 1000 -n 1000 -N 5 times its calls.
//
//   g++ -O2 -pthread mailbox_model.cc -o mailbox_model && ./mailbox_model WORK_NS [RUNS] [SEQ_CST] [PREFETCH_LINES]
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

namespace {

constexpr int kLines = 64;
struct alignas(64) Line {
  std::atomic<uint32_t> seq;
  uint32_t tag;
  unsigned char data[568];
};
struct Ring {
  alignas(64) std::atomic<uint32_t> ack;
  Line lines[kLines];
};

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

// About `ns` nanoseconds of dependent arithmetic (calibrated once).
double itersPerNs = 1;
uint64_t work(uint64_t x, int ns) {
  const long n = static_cast<long>(ns * itersPerNs);
  for (long i = 0; i < n; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

void calibrate() {
  const auto t0 = std::chrono::steady_clock::now();
  volatile uint64_t sink = 0;
  itersPerNs = 1;
  sink = work(1, 20000000);
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  itersPerNs = 20000000.0 / ns;
  (void)sink;
}

void run(int workNs, bool seqCst, int prefetchLines) {
  constexpr int kMessages = 1000 * 6;  // one warm-up timing and five timed
  void* mem = mmap(nullptr, sizeof(Ring), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  auto* ring = new (mem) Ring();
  const std::memory_order order = seqCst ? std::memory_order_seq_cst : std::memory_order_release;
  std::atomic<bool> go{false};
  std::thread consumer([&] {
    pin(1);
    volatile uint64_t sink = 0;
    uint64_t x = 2;
    while (!go.load()) {
    }
    for (uint32_t i = 0; i < kMessages; ++i) {
      Line& l = ring->lines[i % kLines];
      while (l.seq.load(std::memory_order_acquire) != i + 1) __builtin_ia32_pause();
      uint64_t v;
      memcpy(&v, l.data, sizeof(v));
      ring->ack.store(i + 1, order);
      // The next lines, if the producer wrote them already: their transfer overlaps this message's work.
      for (int k = 1; k <= prefetchLines; ++k) __builtin_prefetch(&ring->lines[(i + k) % kLines], 0, 3);
      x = work(x ^ v, workNs);
    }
    sink = x;
    (void)sink;
  });
  pin(0);
  uint64_t x = 1;
  double times[6];
  go.store(true);
  uint32_t acked = 0;
  for (int t = 0; t < 6; ++t) {
    const auto t0 = std::chrono::steady_clock::now();
    for (uint32_t i = t * 1000; i < static_cast<uint32_t>(t + 1) * 1000; ++i) {
      while (i - acked >= kLines) {  // full: wait for the consumer's acknowledgement
        acked = ring->ack.load(std::memory_order_acquire);
        if (i - acked >= kLines) __builtin_ia32_pause();
      }
      Line& l = ring->lines[i % kLines];
      memcpy(l.data, &x, sizeof(x));
      l.seq.store(i + 1, order);
      x = work(x, workNs);
    }
    times[t] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 1000;
  }
  consumer.join();
  for (int t = 1; t < 6; ++t) printf("%.3f ", times[t]);
  printf("\n");
  munmap(mem, sizeof(Ring));
}

}  // namespace

int main(int argc, char** argv) {
  const int workNs = argc > 1 ? atoi(argv[1]) : 150;
  const int runs = argc > 2 ? atoi(argv[2]) : 10;
  const bool seqCst = argc > 3 && atoi(argv[3]) != 0;
  const int prefetchLines = argc > 4 ? atoi(argv[4]) : 0;
  pin(0);
  calibrate();
  printf(
      "# work %d ns per message per side, %s stores, consumer prefetches %d lines ahead, us per message (5 timings "
      "of 1000 per run)\n",
      workNs, seqCst ? "seq_cst" : "release", prefetchLines);
  for (int r = 0; r < runs; ++r) run(workNs, seqCst, prefetchLines);
}
