// Futex wait and wake on 32-bit words that may live in memory shared between processes (so the calls use
// the shared, not the private, futex operations).
#pragma once

#include <atomic>
#include <cstdint>

namespace chorus {

// Sleeps while *word == expected, for at most timeoutUs microseconds (spurious wake-ups are possible).
void futexWait(const std::atomic<uint32_t>* word, uint32_t expected, int64_t timeoutUs);
// Wakes up to `count` sleepers on word.
void futexWake(const std::atomic<uint32_t>* word, int count = INT32_MAX);

// A futex word and the value its waiter last read from it.
struct FutexWord {
  const std::atomic<uint32_t>* word;
  uint32_t seen;
};
// The most words one futexWaitAny watches (the kernel's FUTEX_WAITV_MAX).
constexpr int kMaxFutexWords = 128;
// Sleeps while every words[i] still holds its `seen` value, until a wake on any of them, for at most timeoutUs
// microseconds (spurious wake-ups are possible); 0 < n <= kMaxFutexWords. One system call (futex_waitv, Linux
// 5.16); on an older kernel it sleeps on words[0] alone, for at most 50 us, so that a wake on another word is
// noticed after a short delay instead of never.
void futexWaitAny(const FutexWord* words, int n, int64_t timeoutUs);

// One CPU pause instruction, for spin loops.
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace chorus
