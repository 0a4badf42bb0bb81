// Bandwidth left on every directed link while channels are being placed: each channel that uses a path takes
// its speed from every link of the path.
#pragma once

#include <vector>

#include "topology/graph.h"
#include "topology/paths.h"

namespace chorus::topology {

class LinkBudget {
 public:
  explicit LinkBudget(const Graph& graph);
  // True when every link of the path has at least `bw` left (with a small tolerance for rounding).
  bool fits(const Path& path, double bw) const;
  void take(const Path& path, double bw) { add(path, -bw); }
  void give(const Path& path, double bw) { add(path, bw); }
  double left(const Hop& hop) const { return left_[hop.from][hop.link]; }
  double capacity(const Hop& hop) const;

 private:
  void add(const Path& path, double bw);
  const Graph* graph_;
  std::vector<std::vector<double>> left_;
};

// Max-min fair shares: every channel i uses the hops in uses[i] (a hop may repeat); returns each channel's
// bandwidth such that no link carries more than its capacity and every channel has a saturated link on its
// route (so its bandwidth is the bottleneck of its route given the other channels). Channels with no hop get
// kLocBw.
std::vector<double> fairShares(const Graph& graph, const std::vector<std::vector<Hop>>& uses);

}  // namespace chorus::topology
