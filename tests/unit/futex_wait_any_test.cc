// futexWaitAny: a thread sleeping on several words wakes at a wake on any one of them, returns at once when a word
// no longer holds the value it saw, and ends at its timeout otherwise.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "base/futex.h"

namespace chorus {
namespace {

using Clock = std::chrono::steady_clock;

double elapsedUs(Clock::time_point since) {
  return std::chrono::duration<double, std::micro>(Clock::now() - since).count();
}

// Sleeps on three words in a loop (as the point-to-point engine does) until word `which` changes; another thread
// changes it and wakes it. Every wait slice is 1 s, so an ending well inside that can only come from the wake.
void wakeOn(int which) {
  std::atomic<uint32_t> w[3] = {0, 0, 0};
  std::atomic<bool> asleep{false};
  std::thread sleeper([&] {
    FutexWord words[3] = {{&w[0], 0}, {&w[1], 0}, {&w[2], 0}};
    asleep.store(true);
    while (w[which].load() == 0) futexWaitAny(words, 3, 1000000);
  });
  while (!asleep.load()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let it reach the kernel
  const auto start = Clock::now();
  w[which].store(1);
  futexWake(&w[which]);
  sleeper.join();
  EXPECT_LT(elapsedUs(start), 500000.0) << "word " << which;
}

TEST(FutexWaitAny, AWakeOnAnyWordEndsTheSleep) {
  for (int which = 0; which < 3; ++which) wakeOn(which);
}

TEST(FutexWaitAny, AWordThatChangedBeforeTheCallReturnsAtOnce) {
  std::atomic<uint32_t> a{0}, b{5};
  FutexWord words[2] = {{&a, 0}, {&b, 4}};  // b no longer holds what was seen
  const auto start = Clock::now();
  futexWaitAny(words, 2, 2000000);
  EXPECT_LT(elapsedUs(start), 1000000.0);
}

TEST(FutexWaitAny, EndsAtItsTimeout) {
  std::atomic<uint32_t> a{0}, b{0};
  FutexWord words[2] = {{&a, 0}, {&b, 0}};
  const auto start = Clock::now();
  futexWaitAny(words, 2, 20000);
  const double us = elapsedUs(start);
  EXPECT_GE(us, 15000.0);
  EXPECT_LT(us, 1000000.0);
}

}  // namespace
}  // namespace chorus
