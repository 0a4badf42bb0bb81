// Channel search over a topology graph (NCCL's ncclTopoCompute for rings and trees):
//
// - Rings: for the lowest path type that admits a ring over all GPUs (NVLink first, then PIX, PXB, PHB, SYS),
//   the speed per channel and number of channels that carry the most bandwidth, each channel taking its speed
//   from every link it uses. GPUs that share no path (separate hosts) are stitched through their NICs: each host
//   contributes a chain NET -> GPUs -> NET and host h's chain sends to host h+1's, so a ring crosses every host
//   boundary once per channel. A chain enters by the NIC closest to its first GPU and leaves by the NIC closest
//   to its last GPU (nic_affinity.h); channel c enters by the c-th NIC that some GPU is closest to (rotating
//   which of its GPUs goes first when several share it) and leaves by the exit whose chain uses the fewest links,
//   the same NIC on a tie (rail aligned, as NCCL's crossNic=2 prefers), else the next ones in turn, so the
//   channels spread over the NICs as NCCL's ring graphs do.
// - Bandwidth per ring: max-min fair shares of the links among the channels found, so no link carries more than
//   its bandwidth and each ring runs at the bottleneck of its route.
// - Trees: an intra-host double binary tree along the ring's order plus an inter-host double binary tree
//   (host_order.h), so every GPU is a leaf in one of the two trees.
#pragma once

#include <vector>

#include "topology/graph.h"
#include "topology/host_order.h"
#include "topology/nic_affinity.h"
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
  // Search each host's channels as a multi-node job does, NET -> GPUs -> NET, even when the graph holds one host
  // (NCCL's ring graph on each node of a multi-node job). Graphs whose hosts share no path are always searched so.
  bool viaNets = false;
};

struct SearchResult {
  std::vector<int> gpus;        // GPU nodes, ordered by host then dev: a GPU's position is its rank here
  std::vector<GpuNic> gpuNics;  // per GPU position, its closest NIC port (nic_affinity.h)
  int nHosts = 1;
  bool stitched = false;  // rings enter and leave the hosts through NICs
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
