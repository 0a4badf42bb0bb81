// Executing launched work: each communicator's share of a group runs to completion, all shares at the same
// time (the first on the calling thread, the others on their communicators' workers). This is where a failure
// in the data path stops unwinding (base/error.h, boundary 2).
#pragma once

#include <cstdint>
#include <vector>

#include "base/error.h"
#include "collectives/coll_op.h"

namespace chorus::core {

class Comm;

struct CommWork {
  Comm* comm = nullptr;
  std::vector<coll::CollOp> ops;  // in issue order
  // The flight recorder recorded its operations as running when they were queued (a blocking call, run at once on
  // the calling thread): executeLaunch does not record their start again.
  bool startedWhenQueued = false;
  // Its place in the communicator's issue order (Comm::takeTicket): it runs once the launches issued before it
  // finished.
  uint32_t ticket = 0;
};

// Runs every work: plans it, connects what the plan lists and runs it (collectives/host/host_executor.h).
// Never throws: returns the first failure, which is also recorded as each failing communicator's asynchronous
// error (with its connections closed, so that peers waiting on it fail at once).
Failure executeLaunch(const CommWork* works, size_t n);
inline Failure executeLaunch(const std::vector<CommWork>& works) {
  return executeLaunch(works.data(), works.size());
}

// How many times this thread has planned work (collectives/plan/plan.h: planWork) rather than moved a plan it
// kept: for the tests and benchmarks of plan reuse.
uint64_t plansMadeOnThisThread();

}  // namespace chorus::core
