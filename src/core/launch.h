// Executing launched work: each communicator's share of a group runs to completion, all shares at the same
// time (the first on the calling thread, the others on their communicators' workers).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "collectives/coll_op.h"

namespace chorus::core {

class Comm;

struct CommWork {
  Comm* comm = nullptr;
  std::vector<coll::CollOp> ops;  // in issue order
};

struct LaunchResult {
  Status status = Status::kSuccess;
  std::string message;
};

// Runs every work; returns the first error (also recorded as each failing comm's async error).
LaunchResult executeLaunch(const std::vector<CommWork>& works);

}  // namespace chorus::core
