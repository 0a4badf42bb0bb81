#include "base/futex.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace chorus {

void futexWait(const std::atomic<uint32_t>* word, uint32_t expected, int64_t timeoutUs) {
  struct timespec ts;
  ts.tv_sec = timeoutUs / 1000000;
  ts.tv_nsec = (timeoutUs % 1000000) * 1000;
  // The kernel reads the word itself; std::atomic<uint32_t> is a plain 32-bit word.
  syscall(SYS_futex, reinterpret_cast<const uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futexWake(const std::atomic<uint32_t>* word, int count) {
  syscall(SYS_futex, reinterpret_cast<const uint32_t*>(word), FUTEX_WAKE, count, nullptr, nullptr, 0);
}

void futexWaitAny(const FutexWord* words, int n, int64_t timeoutUs) {
#ifdef SYS_futex_waitv
  static std::atomic<bool> unsupported{false};
  if (!unsupported.load(std::memory_order_relaxed)) {
    struct futex_waitv waiters[kMaxFutexWords] = {};
    for (int i = 0; i < n; ++i) {
      waiters[i].val = words[i].seen;
      waiters[i].uaddr = reinterpret_cast<uintptr_t>(words[i].word);
      waiters[i].flags = FUTEX_32;  // shared: the words may live in memory mapped by several processes
    }
    // futex_waitv takes an absolute timeout on the clock it is given.
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    const int64_t ns = at.tv_nsec + (timeoutUs % 1000000) * 1000;
    at.tv_sec += timeoutUs / 1000000 + ns / 1000000000;
    at.tv_nsec = ns % 1000000000;
    if (syscall(SYS_futex_waitv, waiters, n, 0, &at, CLOCK_MONOTONIC) == 0 || errno != ENOSYS) return;
    unsupported.store(true, std::memory_order_relaxed);
  }
#endif
  futexWait(words[0].word, words[0].seen, timeoutUs < 50 ? timeoutUs : 50);
}

}  // namespace chorus
