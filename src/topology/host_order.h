// Ring and tree orders for communicators, computed from where each rank lives (host, NUMA node, device).
//
// The collectives take their orders from here. Rings group ranks by host, then by NUMA node, so each ring crosses
// every host boundary exactly once and every NUMA boundary of a host once; trees are double binary trees whose
// inter-host edges are one per host and tree. Every rank computes the same answer from the same places, so no
// agreement step is needed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chorus::topology {

// Where one rank lives. Ranks of a communicator are indexed 0..n-1 in the vectors passed below.
struct RankPlace {
  uint64_t hostHash = 0;  // equal on ranks that share a host (base/host_id.h hostHash())
  int numaNode = 0;       // NUMA node of the rank's memory or device; -1 when unknown
  int device = -1;        // CUDA device, or -1 for a host rank
  std::string busId;      // PCI bus id of the device ("0000:07:00.0"); empty for host ranks
};

// nChannels rings over all ranks; each ring is a permutation of 0..n-1, read as "ring[i] sends to ring[i+1]"
// (cyclically). Ranks are grouped by host (in order of each host's lowest rank), then NUMA node, then device and
// rank. Odd channels run the ring backwards and channels rotate each NUMA group, so that different channels use
// different links and different ranks cross the host boundaries. nChannels < 1 is treated as 1.
std::vector<std::vector<int>> searchHostRings(const std::vector<RankPlace>& ranks, int nChannels);

// A pair of trees over the ranks. parent[t][r] is r's parent in tree t (-1 at root[t]); children[t][r] its
// children, at most three (two in the inter-host tree and one or two inside the host).
struct TreePair {
  std::vector<int> parent[2];
  std::vector<std::vector<int>> children[2];
  int root[2] = {-1, -1};
};

// Double binary tree over the ranks: inside each host a double binary tree over the host's ranks in ring order,
// and between hosts a double binary tree over the hosts whose edges join the hosts' local roots. Every rank is a
// leaf in at least one of the two trees when there are more than two ranks; each tree has one edge per host
// boundary (hosts - 1 in all).
TreePair searchHostTrees(const std::vector<RankPlace>& ranks);

// The same construction over explicit groups: hosts[h] lists host h's ranks in the order the local trees
// follow (the GPU search passes its ring order). n is the number of ranks (all of 0..n-1 appear once).
TreePair treesFromHostGroups(const std::vector<std::vector<int>>& hosts, int n);

// Ranks in ring order, grouped by host then NUMA node (the order both searches start from). Exposed for tests
// and for chorus-topo.
std::vector<int> hostOrder(const std::vector<RankPlace>& ranks);

}  // namespace chorus::topology
