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

// One CPU pause instruction, for spin loops.
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace chorus
