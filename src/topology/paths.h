// Paths between every pair of nodes, as NCCL's ncclTopoComputePaths: a breadth-first search from each node
// keeps, for every other node, the shortest route with the highest bottleneck bandwidth, its hops and the worst
// link type along it (path type). Routes may pass through a GPU only for one NVLink hop between GPUs (NVB).
#pragma once

#include <vector>

#include "topology/graph.h"

namespace chorus::topology {

// One directed link: links[linkIndex] of node `from`.
struct Hop {
  int from = -1;
  int link = -1;
};

struct Path {
  PathType type = PathType::kDis;
  double bw = 0;          // bottleneck bandwidth, GB/s
  std::vector<Hop> hops;  // from the source to the destination; empty for LOC and DIS
};

class Paths {
 public:
  explicit Paths(const Graph& graph);
  const Path& get(int from, int to) const { return paths_[static_cast<size_t>(from) * n_ + to]; }
  const Graph& graph() const { return *graph_; }

 private:
  const Graph* graph_;
  int n_;
  std::vector<Path> paths_;
};

}  // namespace chorus::topology
