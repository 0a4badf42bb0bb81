// Properties of the host rings and trees the collectives use: permutations, grouping by host and NUMA node,
// one crossing per host boundary, leaves in one of the two trees.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "topology/host_order.h"
#include "topology/tuning_inputs.h"

namespace chorus::topology {
namespace {

// n ranks spread over hosts and NUMA nodes, interleaved so that rank order is not host order.
std::vector<RankPlace> makePlaces(int n, int nHosts, int nNuma) {
  std::vector<RankPlace> places(n);
  for (int r = 0; r < n; ++r) {
    places[r].hostHash = 1000 + (r * 7) % nHosts;
    places[r].numaNode = (r / nHosts) % nNuma;
  }
  return places;
}

int countBoundaries(const std::vector<int>& ring, const std::vector<RankPlace>& places, bool numa) {
  int crossings = 0;
  for (size_t i = 0; i < ring.size(); ++i) {
    const RankPlace& a = places[ring[i]];
    const RankPlace& b = places[ring[(i + 1) % ring.size()]];
    if (a.hostHash != b.hostHash || (numa && a.numaNode != b.numaNode)) ++crossings;
  }
  return crossings;
}

TEST(TopoHostOrder, RingsArePermutationsCrossingEachBoundaryOnce) {
  for (int n : {1, 2, 3, 5, 8, 13, 32}) {
    for (int nHosts : {1, 2, 3, 4}) {
      for (int nNuma : {1, 2}) {
        auto places = makePlaces(n, nHosts, nNuma);
        std::set<uint64_t> hosts;
        std::set<std::pair<uint64_t, int>> numas;
        for (auto& p : places) hosts.insert(p.hostHash), numas.emplace(p.hostHash, p.numaNode);
        auto rings = searchHostRings(places, 4);
        ASSERT_EQ(rings.size(), 4u);
        for (const auto& ring : rings) {
          std::vector<int> sorted = ring;
          std::sort(sorted.begin(), sorted.end());
          for (int r = 0; r < n; ++r) ASSERT_EQ(sorted[r], r);
          int expectedHosts = hosts.size() > 1 ? static_cast<int>(hosts.size()) : 0;
          EXPECT_EQ(countBoundaries(ring, places, false), expectedHosts) << n << " " << nHosts << " " << nNuma;
          int expectedNuma = numas.size() > 1 ? static_cast<int>(numas.size()) : 0;
          EXPECT_EQ(countBoundaries(ring, places, true), expectedNuma) << n << " " << nHosts << " " << nNuma;
        }
      }
    }
  }
}

TEST(TopoHostOrder, ChannelsDiffer) {
  auto places = makePlaces(8, 2, 2);
  auto rings = searchHostRings(places, 2);
  EXPECT_NE(rings[0], rings[1]);
  EXPECT_EQ(searchHostRings(places, 0).size(), 1u);
}

TEST(TopoHostOrder, TreesCoverEveryRankAndEveryRankIsALeafOnce) {
  for (int n = 1; n <= 40; ++n) {
    for (int nHosts : {1, 2, 3, 5}) {
      auto places = makePlaces(n, nHosts, 2);
      std::set<uint64_t> hosts;
      for (auto& p : places) hosts.insert(p.hostHash);
      TreePair trees = searchHostTrees(places);
      for (int t = 0; t < 2; ++t) {
        ASSERT_EQ(trees.parent[t].size(), static_cast<size_t>(n));
        int roots = 0, crossEdges = 0;
        for (int r = 0; r < n; ++r) {
          int p = trees.parent[t][r];
          if (p == -1) {
            ++roots;
            EXPECT_EQ(r, trees.root[t]);
            continue;
          }
          const auto& kids = trees.children[t][p];
          EXPECT_EQ(std::count(kids.begin(), kids.end(), r), 1);
          if (places[p].hostHash != places[r].hostHash) ++crossEdges;
          // Reaches the root without a cycle.
          int steps = 0;
          for (int q = r; q != -1 && steps <= n; q = trees.parent[t][q]) ++steps;
          EXPECT_LE(steps, n);
        }
        EXPECT_EQ(roots, 1);
        EXPECT_EQ(crossEdges, static_cast<int>(hosts.size()) - 1);
      }
      if (n > 2) {
        for (int r = 0; r < n; ++r)
          EXPECT_TRUE(trees.children[0][r].empty() || trees.children[1][r].empty())
              << "n=" << n << " hosts=" << nHosts << " rank " << r;
      }
    }
  }
}

TEST(TopoHostOrder, TuningInputsPreferNicBoundOnSeveralHosts) {
  auto one = hostTuningInputs(makePlaces(8, 1, 1), 2, 1.25);
  auto two = hostTuningInputs(makePlaces(8, 2, 1), 2, 1.25);
  EXPECT_GT(one.at(TunedColl::kAllReduce, TunedAlgo::kRing).busBwGBs,
            two.at(TunedColl::kAllReduce, TunedAlgo::kRing).busBwGBs);
  EXPECT_LE(two.at(TunedColl::kAllReduce, TunedAlgo::kRing).busBwGBs, 1.25 + 1e-9);
  EXPECT_GT(two.at(TunedColl::kAllReduce, TunedAlgo::kRing).latencyUs,
            one.at(TunedColl::kAllReduce, TunedAlgo::kRing).latencyUs);
  EXPECT_EQ(one.at(TunedColl::kAllGather, TunedAlgo::kTree).busBwGBs, 0);
  EXPECT_GT(hostNicGBs(), 0);
}

}  // namespace
}  // namespace chorus::topology
