// Deadline: never for 0, negative and out-of-range timeouts; a deadline of N ms expires after about N ms (the
// coarse clock it reads is exact to a tick, 4 ms here) and not long before; remainingMs counts down; min takes
// the earlier.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "base/deadline.h"

namespace chorus {
namespace {

using Clock = std::chrono::steady_clock;

TEST(Deadline, ZeroNegativeAndOutOfRangeTimeoutsMeanNever) {
  for (int64_t ms : {int64_t{0}, int64_t{-5}, INT64_MAX, INT64_MAX / 1000}) {
    const Deadline d = Deadline::afterMs(ms);
    EXPECT_TRUE(d.isNever()) << ms;
    EXPECT_FALSE(d.expired()) << ms;
    EXPECT_EQ(d.remainingMs(), INT32_MAX) << ms;
  }
  EXPECT_TRUE(Deadline::never().isNever());
}

TEST(Deadline, ExpiresAfterItsTimeToATick) {
  const auto start = Clock::now();
  const Deadline d = Deadline::afterMs(60);
  EXPECT_FALSE(d.isNever());
  EXPECT_LE(d.remainingMs(), 60);
  while (!d.expired()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  // The coarse clock moves by ticks (at most 10 ms on any kernel Chorus runs on): early by less than one.
  EXPECT_GE(ms, 50.0);
  EXPECT_EQ(d.remainingMs(), 0);
}

TEST(Deadline, MinIsTheEarlier) {
  const Deadline soon = Deadline::afterMs(1000);
  const Deadline late = Deadline::afterMs(100000);
  EXPECT_LE(soon.min(late).remainingMs(), 1000);
  EXPECT_LE(late.min(soon).remainingMs(), 1000);
  EXPECT_GT(late.min(Deadline::never()).remainingMs(), 90000);
  EXPECT_TRUE(Deadline::never().min(Deadline::never()).isNever());
}

}  // namespace
}  // namespace chorus
