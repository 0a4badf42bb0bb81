// Cache-line round trip between CPU 0 and CPU 1, and a 2-thread copy through a shared 1 MiB ring.
#include <pthread.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
static void pin(int c) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(c, &s);
  pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}
alignas(64) std::atomic<int> a{0};
alignas(64) std::atomic<int> b{0};
int main() {
  const int N = 200000;
  std::thread t([&] {
    pin(1);
    for (int i = 1; i <= N; i++) {
      while (a.load(std::memory_order_acquire) != i) {
      }
      b.store(i, std::memory_order_release);
    }
  });
  pin(0);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 1; i <= N; i++) {
    a.store(i, std::memory_order_release);
    while (b.load(std::memory_order_acquire) != i) {
    }
  }
  auto t1 = std::chrono::steady_clock::now();
  t.join();
  double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / N;
  // Producer/consumer copy through a 512 KiB ring of 64 KiB chunks: 256 MiB in all.
  const size_t C = 64 << 10, K = 8, TOT = size_t(256) << 20;
  std::vector<char> ring(C * K), src(C), dst(C);
  memset(src.data(), 1, C);
  alignas(64) static std::atomic<size_t> head{0}, tail{0};
  auto c0 = std::chrono::steady_clock::now();
  std::thread cons([&] {
    pin(1);
    for (size_t i = 0; i < TOT / C; i++) {
      while (head.load(std::memory_order_acquire) <= i) {
      }
      memcpy(dst.data(), ring.data() + (i % K) * C, C);
      tail.store(i + 1, std::memory_order_release);
    }
  });
  for (size_t i = 0; i < TOT / C; i++) {
    while (i >= tail.load(std::memory_order_acquire) + K) {
    }
    memcpy(ring.data() + (i % K) * C, src.data(), C);
    head.store(i + 1, std::memory_order_release);
  }
  cons.join();
  auto c1 = std::chrono::steady_clock::now();
  double gbs = TOT / std::chrono::duration<double>(c1 - c0).count() / 1e9;
  printf("round trip %.0f ns, ring copy %.2f GB/s\n", ns, gbs);
}
