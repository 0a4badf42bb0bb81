// Channel search over a topology graph (NCCL's ncclTopoCompute for rings and trees):
//
// - Rings: for the lowest path type that admits a ring over all GPUs (NVLink first, then PIX, PXB, PHB, SYS),
//   the speed per channel and number of channels that carry the most bandwidth, each channel taking its speed
//   from every link it uses. GPUs that share no path (separate hosts) are stitched through their NICs: each host
//   contributes a chain NET -> GPUs -> NET and host h's chain sends to host h+1's.
// - Bandwidth per ring: max-min fair shares of the links among the channels found, so no link carries more than
//   its bandwidth and each ring runs at the bottleneck of its route.
// - Trees: an intra-host double binary tree along the ring's order plus an inter-host double binary tree
//   (host_order.h), so every GPU is a leaf in one of the two trees.
#pragma once

#include <vector>

#include "topology/graph.h"
#include "topology/host_order.h"
#include "topology/paths.h"
#include "topology/tuning_inputs.h"

namespace chorus::topology {

struct RingChannel {
  std::vector<int> order;  // positions in SearchResult::gpus, in ring order (order[i] sends to order[i+1])
  std::vector<std::pair<int, int>> nets;  // stitched rings: per host the NET nodes the chain enters and leaves by
  std::vector<Hop> hops;                  // every directed link the ring uses, with repetition
  double bw = 0;                          // GB/s this channel is given (fair share)
  double bottleneck = 0;                  // GB/s the ring's route would carry alone
};

struct SearchOptions {
  int maxChannels = 16;
};

struct SearchResult {
  std::vector<int> gpus;  // GPU nodes, ordered by host then dev: a GPU's position is its rank here
  int nHosts = 1;
  bool stitched = false;  // rings cross hosts through NICs
  PathType typeIntra = PathType::kLoc;
  PathType typeInter = PathType::kLoc;
  double speed = 0;  // speed per channel the search placed (before fair shares)
  std::vector<RingChannel> rings;
  TreePair trees;
  double treeBw = 0;  // bottleneck of the tree edges
  TuningInputs tuning;
};

SearchResult searchChannels(const Graph& graph, const Paths& paths, const SearchOptions& options = {});

}  // namespace chorus::topology
