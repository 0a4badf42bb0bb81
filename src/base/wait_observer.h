// A hook through which a tracer sees the waits of the thread it watches (the trace's nested "wait" events).
// Costs one thread-local load per wait that had to wait when nothing watches.
#pragma once

#include <cstdint>
#include <string>

namespace chorus {

class WaitObserver {
 public:
  virtual ~WaitObserver() = default;
  // A wait for `what` ("data", "a free slot") on connection `where` took [startNs, endNs) of nowNs().
  virtual void waited(const char* what, const std::string& where, uint64_t startNs, uint64_t endNs) = 0;
};

// The observer of the calling thread's waits; nullptr when none.
inline WaitObserver*& currentWaitObserver() {
  thread_local WaitObserver* observer = nullptr;
  return observer;
}

}  // namespace chorus
