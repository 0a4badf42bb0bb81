// A point in time after which a wait gives up with chorusTimeout. Every blocking wait in Chorus takes one.
#pragma once

#include <time.h>

#include <cstdint>

namespace chorus {

// Read from the coarse monotonic clock: every operation makes its wait context's deadline, and a precise clock
// read (21 ns on the 2-core AMD EPYC VM) was a tenth of a blocking 8-byte all-reduce's time on one rank, while
// the coarse one costs 3 ns. A deadline is exact to the clock's tick (4 ms there), far inside any timeout.
class Deadline {
 public:
  // A deadline `ms` milliseconds from now; ms <= 0, or more than kLongestMs, means never.
  static Deadline afterMs(int64_t ms) {
    if (ms <= 0 || ms > kLongestMs) return never();
    return Deadline(coarseNowNs() + ms * 1000000);
  }
  static Deadline never() { return Deadline(kNever); }

  bool expired() const { return coarseNowNs() >= whenNs_; }
  bool isNever() const { return whenNs_ == kNever; }
  // Milliseconds left, clamped to [0, INT32_MAX] (suitable for poll()).
  int remainingMs() const {
    if (isNever()) return INT32_MAX;
    const int64_t left = (whenNs_ - coarseNowNs()) / 1000000;
    return left <= 0 ? 0 : left > INT32_MAX ? INT32_MAX : static_cast<int>(left);
  }
  // The earlier of the two deadlines.
  Deadline min(const Deadline& o) const { return whenNs_ <= o.whenNs_ ? *this : o; }

 private:
  static constexpr int64_t kNever = INT64_MAX;
  // Longer timeouts are never (146 years): a constant, so that making a deadline, once per operation, divides
  // nothing; the sum cannot overflow while the clock reads under half its range (146 years of uptime).
  static constexpr int64_t kLongestMs = kNever / 2 / 1000000;
  explicit Deadline(int64_t whenNs) : whenNs_(whenNs) {}
  static int64_t coarseNowNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  }
  int64_t whenNs_;
};

}  // namespace chorus
