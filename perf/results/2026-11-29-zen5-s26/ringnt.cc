// Ring copy between CPU 0 and 1 with ordinary or streaming stores into the ring; prints the round trip first.
#include <immintrin.h>
#include <pthread.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
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
static void ntcopy(char* d, const char* s, size_t n) {
  for (size_t i = 0; i < n; i += 64) {
    __m256i x = _mm256_loadu_si256((const __m256i*)(s + i)), y = _mm256_loadu_si256((const __m256i*)(s + i + 32));
    _mm256_stream_si256((__m256i*)(d + i), x);
    _mm256_stream_si256((__m256i*)(d + i + 32), y);
  }
  _mm_sfence();
}
double rt() {
  const int N = 100000;
  a = 0;
  b = 0;
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
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / N;
}
double ring(int nt, size_t C, size_t K, size_t srcBytes) {
  const size_t TOT = size_t(256) << 20;
  char* r = (char*)aligned_alloc(4096, C * K);
  char* src = (char*)aligned_alloc(4096, srcBytes);
  char* dst = (char*)aligned_alloc(4096, srcBytes);
  memset(r, 0, C * K);
  memset(src, 1, srcBytes);
  memset(dst, 0, srcBytes);
  alignas(64) static std::atomic<size_t> head, tail;
  head = 0;
  tail = 0;
  pin(0);
  auto c0 = std::chrono::steady_clock::now();
  std::thread cons([&] {
    pin(1);
    for (size_t i = 0; i < TOT / C; i++) {
      while (head.load(std::memory_order_acquire) <= i) {
      }
      memcpy(dst + (i * C) % srcBytes, r + (i % K) * C, C);
      tail.store(i + 1, std::memory_order_release);
    }
  });
  for (size_t i = 0; i < TOT / C; i++) {
    while (i >= tail.load(std::memory_order_acquire) + K) {
    }
    if (nt)
      ntcopy(r + (i % K) * C, src + (i * C) % srcBytes, C);
    else
      memcpy(r + (i % K) * C, src + (i * C) % srcBytes, C);
    head.store(i + 1, std::memory_order_release);
  }
  cons.join();
  auto c1 = std::chrono::steady_clock::now();
  free(r);
  free(src);
  free(dst);
  return TOT / std::chrono::duration<double>(c1 - c0).count() / 1e9;
}
int main(int argc, char** argv) {
  size_t big = size_t(64) << 20;
  printf(
      "rt %.0f | 64Kx8 small src: plain %.2f nt %.2f | 64Kx8 64MiB src: plain %.2f nt %.2f | 512Kx8 64MiB src: plain "
      "%.2f nt %.2f | rt %.0f\n",
      rt(), ring(0, 64 << 10, 8, 64 << 10), ring(1, 64 << 10, 8, 64 << 10), ring(0, 64 << 10, 8, big),
      ring(1, 64 << 10, 8, big), ring(0, 512 << 10, 8, big), ring(1, 512 << 10, 8, big), rt());
}
