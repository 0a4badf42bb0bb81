#include "topology/host_order.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "topology/dtree.h"

namespace chorus::topology {
namespace {

// Ranks split into hosts, each host into NUMA groups, all in the order hostOrder() walks them.
using Groups = std::vector<std::vector<std::vector<int>>>;

Groups groupRanks(const std::vector<RankPlace>& ranks) {
  // Hosts and NUMA nodes are numbered by their lowest rank, so every rank computes the same order.
  std::map<uint64_t, int> hostIndex;
  for (size_t r = 0; r < ranks.size(); ++r) hostIndex.emplace(ranks[r].hostHash, static_cast<int>(hostIndex.size()));
  std::vector<int> order(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) order[r] = static_cast<int>(r);
  auto key = [&](int r) {
    const RankPlace& p = ranks[r];
    return std::make_tuple(hostIndex[p.hostHash], p.numaNode, p.device, p.busId, r);
  };
  std::sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
  Groups groups;
  for (size_t i = 0; i < order.size(); ++i) {
    int r = order[i];
    bool newHost = i == 0 || ranks[order[i - 1]].hostHash != ranks[r].hostHash;
    bool newNuma = newHost || ranks[order[i - 1]].numaNode != ranks[r].numaNode;
    if (newHost) groups.emplace_back();
    if (newNuma) groups.back().emplace_back();
    groups.back().back().push_back(r);
  }
  return groups;
}

}  // namespace

std::vector<int> hostOrder(const std::vector<RankPlace>& ranks) {
  std::vector<int> order;
  for (const auto& host : groupRanks(ranks))
    for (const auto& numa : host) order.insert(order.end(), numa.begin(), numa.end());
  return order;
}

std::vector<std::vector<int>> searchHostRings(const std::vector<RankPlace>& ranks, int nChannels) {
  nChannels = std::max(nChannels, 1);
  Groups groups = groupRanks(ranks);
  std::vector<std::vector<int>> rings;
  for (int c = 0; c < nChannels; ++c) {
    std::vector<int> ring;
    ring.reserve(ranks.size());
    // Rotating inside a NUMA group keeps the group contiguous (so boundaries are still crossed once) while the
    // ranks that talk across the boundary change from channel to channel.
    int rotation = c / 2;
    for (const auto& host : groups) {
      for (const auto& numa : host) {
        size_t shift = numa.size() > 1 ? static_cast<size_t>(rotation) % numa.size() : 0;
        for (size_t i = 0; i < numa.size(); ++i) ring.push_back(numa[(i + shift) % numa.size()]);
      }
    }
    if (c % 2 == 1) std::reverse(ring.begin(), ring.end());
    rings.push_back(std::move(ring));
  }
  return rings;
}

TreePair searchHostTrees(const std::vector<RankPlace>& ranks) {
  std::vector<std::vector<int>> hosts;
  for (const auto& host : groupRanks(ranks)) {
    hosts.emplace_back();
    for (const auto& numa : host) hosts.back().insert(hosts.back().end(), numa.begin(), numa.end());
  }
  return treesFromHostGroups(hosts, static_cast<int>(ranks.size()));
}

TreePair treesFromHostGroups(const std::vector<std::vector<int>>& hosts, int n) {
  TreePair trees;
  for (int t = 0; t < 2; ++t) {
    trees.parent[t].assign(n, -1);
    trees.children[t].assign(n, {});
  }
  if (n == 0 || hosts.empty()) return trees;
  const int nHosts = static_cast<int>(hosts.size());
  auto link = [&](int t, int child, int parent) {
    trees.parent[t][child] = parent;
    trees.children[t][parent].push_back(child);
  };
  for (int t = 0; t < 2; ++t) {
    // Inside each host: the double binary tree over the host's ranks in the given order.
    for (const auto& local : hosts) {
      const int k = static_cast<int>(local.size());
      for (int p = 0; p < k; ++p) {
        TreeLinks l = dtreeLinks(k, p, t);
        if (l.parent >= 0) link(t, local[p], local[l.parent]);
      }
    }
    // Between hosts: the double binary tree over hosts, joining each host's local root of this tree. The local
    // root of tree 0 is a leaf of the local tree 1 and vice versa, so the inter-host edges never take a rank's
    // leaf status in both trees.
    for (int h = 0; h < nHosts; ++h) {
      TreeLinks l = dtreeLinks(nHosts, h, t);
      if (l.parent < 0) continue;
      const auto& me = hosts[h];
      const auto& up = hosts[l.parent];
      link(t, me[dtreeRoot(static_cast<int>(me.size()), t)], up[dtreeRoot(static_cast<int>(up.size()), t)]);
    }
    const auto& top = hosts[dtreeRoot(nHosts, t)];
    trees.root[t] = top[dtreeRoot(static_cast<int>(top.size()), t)];
  }
  return trees;
}

}  // namespace chorus::topology
