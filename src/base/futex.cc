#include "base/futex.h"

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

}  // namespace chorus
