// The host's point-to-point progress engine: moves every queue of a plan (plan/plan.h) at once, a slot at a time
// and never blocking on one queue, so that sends and receives never wait on each other whatever their order,
// and the matching groups of two ranks cannot deadlock. Copies to oneself are made first.
#pragma once

#include <vector>

#include "collectives/host/host_executor.h"
#include "collectives/plan/plan.h"

namespace chorus::coll {

// Runs plan's self copies and queues; copies[i] is the executor's copy of plan.staging[i].
void runP2p(const Plan& plan, const std::vector<const void*>& copies, const ExecEnv& env);

}  // namespace chorus::coll
