#include "topology/nic_affinity.h"

#include <map>

namespace chorus::topology {

std::vector<GpuNic> gpuNicAffinity(const Graph& graph, const Paths& paths) {
  const std::vector<int> gpus = graph.ofType(NodeType::kGpu);
  const std::vector<int> nets = graph.ofType(NodeType::kNet);
  std::vector<GpuNic> out(gpus.size());
  // The closest NETs of each GPU (same best type, bandwidth within rounding of the best), in NET dev order.
  std::map<std::vector<int>, std::vector<size_t>> sharing;  // candidate set -> GPUs (positions) that have it
  std::vector<std::vector<int>> closest(gpus.size());
  for (size_t i = 0; i < gpus.size(); ++i) {
    out[i].gpu = gpus[i];
    PathType best = PathType::kDis;
    double bestBw = 0;
    for (int net : nets) {
      const Path& p = paths.get(gpus[i], net);
      if (graph.node(net).host != graph.node(gpus[i]).host || p.type == PathType::kDis) continue;
      if (p.type < best || (p.type == best && p.bw > bestBw)) {
        best = p.type;
        bestBw = p.bw;
      }
    }
    for (int net : nets) {
      const Path& p = paths.get(gpus[i], net);
      if (graph.node(net).host == graph.node(gpus[i]).host && p.type == best && p.type != PathType::kDis &&
          p.bw >= bestBw * (1 - 1e-9))
        closest[i].push_back(net);
    }
    out[i].closest = closest[i];
    if (!closest[i].empty()) sharing[closest[i]].push_back(i);
  }
  for (const auto& [candidates, users] : sharing) {
    for (size_t k = 0; k < users.size(); ++k) {
      GpuNic& pair = out[users[k]];
      pair.net = candidates[k % candidates.size()];
      const Path& p = paths.get(pair.gpu, pair.net);
      pair.type = p.type;
      pair.bw = p.bw;
    }
  }
  return out;
}

}  // namespace chorus::topology
