#include "topology/paths.h"

#include <algorithm>

#include "topology/bandwidths.h"

namespace chorus::topology {
namespace {

PathType linkPathType(LinkType t) {
  switch (t) {
    case LinkType::kLoc: return PathType::kLoc;
    case LinkType::kNvl: return PathType::kNvl;
    case LinkType::kC2c: return PathType::kC2c;
    case LinkType::kPci: return PathType::kPix;
    case LinkType::kSys: return PathType::kSys;
    case LinkType::kNet: return PathType::kLoc;  // the NIC -> NET hop adds no distance (as NCCL)
  }
  return PathType::kDis;
}

int reverseLink(const Graph& g, int from, int to, LinkType type) {
  const auto& links = g.node(from).links;
  for (size_t i = 0; i < links.size(); ++i)
    if (links[i].to == to && links[i].type == type) return static_cast<int>(i);
  for (size_t i = 0; i < links.size(); ++i)
    if (links[i].to == to) return static_cast<int>(i);
  return -1;
}

}  // namespace

Paths::Paths(const Graph& graph) : graph_(&graph), n_(graph.size()), paths_(static_cast<size_t>(n_) * n_) {
  // For each destination `base`, grow paths backwards: if node X has a path to base and Y links to X, then Y
  // reaches base through X. This is NCCL's ncclTopoSetPaths.
  for (int base = 0; base < n_; ++base) {
    Path& self = paths_[static_cast<size_t>(base) * n_ + base];
    self.type = PathType::kLoc;
    self.bw = kLocBw;
    std::vector<int> frontier{base};
    while (!frontier.empty()) {
      std::vector<int> next;
      for (int node : frontier) {
        const Path& path = get(node, base);
        const Node& nd = graph.node(node);
        for (const Link& link : nd.links) {
          int rem = link.to;
          const Node& rn = graph.node(rem);
          // A GPU relays only one NVLink hop to another GPU (NVB); NICs and NETs never relay.
          if (node != base && nd.type == NodeType::kGpu &&
              (link.type != LinkType::kNvl || rn.type != NodeType::kGpu || path.hops.size() > 1))
            continue;
          if (node != base && nd.type == NodeType::kNet) continue;
          if (rem == base) continue;
          int back = reverseLink(graph, rem, node, link.type);
          if (back < 0) continue;
          const Link& bl = graph.node(rem).links[back];
          double bw = std::min(path.bw, bl.bw);
          Path& rp = paths_[static_cast<size_t>(rem) * n_ + base];
          bool unset = rp.type == PathType::kDis;
          if ((unset || rp.hops.size() > path.hops.size()) && rp.bw < bw) {
            rp.hops.clear();
            rp.hops.push_back(Hop{rem, back});
            rp.hops.insert(rp.hops.end(), path.hops.begin(), path.hops.end());
            rp.bw = bw;
            PathType type = linkPathType(bl.type);
            if (nd.type == NodeType::kPci && rn.type == NodeType::kPci) type = PathType::kPxb;
            if (bl.type == LinkType::kPci && (nd.type == NodeType::kCpu || rn.type == NodeType::kCpu))
              type = PathType::kPhb;
            if (nd.type == NodeType::kGpu && path.type == PathType::kNvl && type == PathType::kNvl &&
                rp.hops.size() > 1)
              type = PathType::kNvb;
            PathType prev = node == base ? PathType::kLoc : path.type;
            PathType merged = std::max(prev, type);
            // A PCI hop behind a C2C link to the CPU is P2C (GPU -> C2C -> CPU -> PCI -> NIC).
            if ((prev == PathType::kC2c && type == PathType::kPhb) ||
                (prev == PathType::kPhb && type == PathType::kC2c))
              merged = PathType::kP2c;
            rp.type = merged;
            if (std::find(next.begin(), next.end(), rem) == next.end()) next.push_back(rem);
          }
        }
      }
      frontier = std::move(next);
    }
  }
}

}  // namespace chorus::topology
