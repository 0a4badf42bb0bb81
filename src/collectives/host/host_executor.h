// The host executor: runs one communicator's plan (plan/plan.h) on the calling thread over HostPrims: the
// collectives in issue order (taking each staging copy at its point), then the point-to-point transfers,
// progressed together by p2p_engine.h.
#pragma once

#include "base/wait.h"
#include "collectives/conn_key.h"
#include "collectives/plan/plan.h"
#include "collectives/topo_view.h"

namespace chorus::coll {

struct ExecEnv {
  int rank = 0;
  int nranks = 1;
  const TopoView* topo = nullptr;
  ConnectionProvider* conns = nullptr;  // every connection of plan.connections is built
  const WaitContext* ctx = nullptr;
  uint32_t firstSeq = 0;  // sequence number of the plan's first collective on its communicator (slot_tag.h)
};

// Runs the plan. A failure throws chorus::Error out of the Primitives call or wait that found it (base/error.h
// says where it is caught).
void runPlan(const Plan& plan, const ExecEnv& env);

}  // namespace chorus::coll
