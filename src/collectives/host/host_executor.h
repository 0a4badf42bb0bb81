// The host executor: runs one communicator's plan (plan/plan.h) on the calling thread over HostPrims: the
// collectives in issue order (taking each staging copy at its point), then the point-to-point transfers,
// progressed together by p2p_engine.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/wait.h"
#include "collectives/conn_key.h"
#include "collectives/host/host_prims.h"
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

// What the executor decides for one collective of a plan from the plan and the communicator alone. Each is the same
// on every run of the plan, and on the plan moved to other buffers by one distance (plan/plan_reuse.h): moving input
// and output together keeps the operation in place or not.
struct CollSetup {
  uint32_t tagBase = 0;                      // slotTag(op, 0): the call's number is added per run
  const reduce::Kernels* kernels = nullptr;  // reductions and scaled copies only
  size_t footprint = 0;                      // footprintBytes of this rank's input and output
  bool nonTemporalOutput = false;
  bool singleCopy = false;          // useSingleCopy
  bool mappedRefsIfShared = false;  // useMappedRefs: single copy for bytes in chorusMemAlloc allocations, if any
  bool inputRefs = true;            // HostPrimsConfig::inputRefs, where single copy applies
  // Ring and tree: each channel's peers ([ch] for channels[ch] of the plan; the communicator keeps its connections
  // for its life).
  std::vector<PrimsPeers> up;
  std::vector<PrimsPeers> down;  // tree only
};

// The setups of a plan's collectives, kept by a caller that runs the plan again (core/launch.cc keeps one with each
// memoised plan): made on the first run, they (with PrimsPeers) spared every later run of a 2-rank 8-byte broadcast
// about 250 of its 1,470 instructions per call (docs/performance.md, session 30). Cleared by the caller when the
// plan is made anew.
struct PlanSetup {
  std::vector<CollSetup> colls;  // plan.colls[i]'s at [i]
  bool made = false;             // a plan without collectives has none to make
  void clear() { made = false; }
};

// Runs the plan. A failure throws chorus::Error out of the Primitives call or wait that found it (base/error.h
// says where it is caught). `setup` (required): the plan's setups, kept between runs of this plan on this
// communicator (made here on the first).
void runPlan(const Plan& plan, const ExecEnv& env, PlanSetup* setup);

}  // namespace chorus::coll
