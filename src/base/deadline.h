// A point in time after which a wait gives up with chorusTimeout. Every blocking wait in Chorus takes one.
#pragma once

#include <chrono>
#include <cstdint>

namespace chorus {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  // A deadline `ms` milliseconds from now; ms <= 0 means never.
  static Deadline afterMs(int64_t ms) {
    if (ms <= 0) return never();
    return Deadline(Clock::now() + std::chrono::milliseconds(ms));
  }
  static Deadline never() { return Deadline(Clock::time_point::max()); }

  bool expired() const { return Clock::now() >= when_; }
  bool isNever() const { return when_ == Clock::time_point::max(); }
  // Milliseconds left, clamped to [0, INT32_MAX] (suitable for poll()).
  int remainingMs() const {
    if (isNever()) return INT32_MAX;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(when_ - Clock::now()).count();
    return left <= 0 ? 0 : left > INT32_MAX ? INT32_MAX : static_cast<int>(left);
  }
  // The earlier of the two deadlines.
  Deadline min(const Deadline& o) const { return when_ <= o.when_ ? *this : o; }
  Clock::time_point when() const { return when_; }

 private:
  explicit Deadline(Clock::time_point when) : when_(when) {}
  Clock::time_point when_;
};

}  // namespace chorus
