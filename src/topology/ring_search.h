// Depth-first search for one ring (or one host's chain between NICs) at a given speed and path-type limit,
// taking the speed from the links it uses (search.cc's ncclTopoSearchRec, simplified).
#pragma once

#include <vector>

#include "topology/link_budget.h"
#include "topology/paths.h"

namespace chorus::topology {

struct RingRequest {
  std::vector<int> gpus;                // GPU nodes to visit, in PCI (dev) order
  int startNet = -1;                    // chain mode: enter from this NET node...
  std::vector<int> endNets;             // ...and leave by one of these (tried in order); ring mode when startNet < 0
  int firstGpu = -1;                    // chain mode: when >= 0, the index in gpus of the GPU the chain enters by...
  int lastGpu = -1;                     // ...and of the GPU it leaves by (may equal firstGpu when there is one GPU)
  PathType typeIntra = PathType::kSys;  // worst path type allowed between consecutive GPUs
  double speed = 0;                     // GB/s taken from every link of every hop
  const std::vector<int>* replay = nullptr;  // a previous channel's order, tried first
  long maxSteps = 1 << 14;                   // DFS budget for this ring
};

// On success returns the order (ring: the GPUs; chain: NET, GPUs, NET) and leaves the speed taken from the
// budget; on failure returns an empty vector and leaves the budget unchanged.
std::vector<int> findRing(const Paths& paths, LinkBudget& budget, const RingRequest& request);

// The hops a ring or chain order uses (ring: closes back to the first node; chain: open).
std::vector<Hop> orderHops(const Paths& paths, const std::vector<int>& order, bool closed);

}  // namespace chorus::topology
