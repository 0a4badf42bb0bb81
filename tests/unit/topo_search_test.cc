// Properties of the channel search on fixture topologies of real machines (tests/fixtures): rings are cycles over
// all GPUs, stay on NVLink where a pure-NVLink ring exists, never overload a link, run at the bottleneck of their
// route; trees hold every rank once and make each rank a leaf in one of the two.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "topology/paths.h"
#include "topology/search.h"
#include "topology/topo_xml.h"

namespace chorus::topology {
namespace {

std::string fixture(const std::string& name) {
  std::string here = __FILE__;
  return here.substr(0, here.rfind("/unit/")) + "/fixtures/" + name;
}

struct Loaded {
  Graph graph;
  std::unique_ptr<Paths> paths;
  SearchResult result;
};

std::unique_ptr<Loaded> load(const std::string& name) {
  auto l = std::make_unique<Loaded>();
  l->graph = loadTopoFile(fixture(name));
  l->paths = std::make_unique<Paths>(l->graph);
  l->result = searchChannels(l->graph, *l->paths);
  return l;
}

// True when some cyclic order of the GPUs has an NVLink path (NVL or NVB) between every pair of neighbours.
bool pureNvlinkRingExists(const Graph& g, const Paths& p, const std::vector<int>& gpus) {
  std::vector<int> order = gpus;
  std::sort(order.begin() + 1, order.end());
  do {
    bool ok = true;
    for (size_t i = 0; i < order.size() && ok; ++i)
      ok = p.get(order[i], order[(i + 1) % order.size()]).type <= PathType::kNvb;
    if (ok) return true;
  } while (std::next_permutation(order.begin() + 1, order.end()));
  (void)g;
  return false;
}

void checkRings(const Loaded& l) {
  const auto& r = l.result;
  const int n = static_cast<int>(r.gpus.size());
  ASSERT_FALSE(r.rings.empty());
  bool nvlinkOnly = n > 1 && !r.stitched && pureNvlinkRingExists(l.graph, *l.paths, r.gpus);
  std::map<std::pair<int, int>, double> load;
  for (const auto& ring : r.rings) {
    // A cycle over all GPUs: each appears once.
    std::vector<int> sorted = ring.order;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(static_cast<int>(sorted.size()), n);
    for (int i = 0; i < n; ++i) ASSERT_EQ(sorted[i], i);
    if (nvlinkOnly) {
      for (int i = 0; i < n; ++i) {
        int a = r.gpus[ring.order[i]], b = r.gpus[ring.order[(i + 1) % n]];
        EXPECT_LE(l.paths->get(a, b).type, PathType::kNvb) << l.graph.label(a) << " -> " << l.graph.label(b);
      }
    }
    EXPECT_GT(ring.bw, 0);
    EXPECT_LE(ring.bw, ring.bottleneck + 1e-6);
    for (const Hop& h : ring.hops) load[{h.from, h.link}] += ring.bw;
  }
  // No link carries more than its bandwidth across channels.
  for (const auto& [key, bw] : load) {
    double cap = l.graph.node(key.first).links[key.second].bw;
    EXPECT_LE(bw, cap * (1 + 1e-6)) << l.graph.label(key.first) << " link " << key.second;
  }
  // Each ring runs at the bottleneck of its route: some link it uses is full.
  for (const auto& ring : r.rings) {
    if (ring.hops.empty()) continue;
    bool saturated = false;
    for (const Hop& h : ring.hops) {
      double cap = l.graph.node(h.from).links[h.link].bw;
      saturated = saturated || load[{h.from, h.link}] >= cap * (1 - 1e-6);
    }
    EXPECT_TRUE(saturated);
  }
  // With a single channel the ring's bandwidth is exactly its route's bottleneck.
  if (r.rings.size() == 1) {
    EXPECT_NEAR(r.rings[0].bw, r.rings[0].bottleneck, 1e-6);
  }
}

void checkTrees(const SearchResult& r) {
  const int n = static_cast<int>(r.gpus.size());
  for (int t = 0; t < 2; ++t) {
    ASSERT_EQ(static_cast<int>(r.trees.parent[t].size()), n);
    int roots = 0;
    for (int i = 0; i < n; ++i) {
      if (r.trees.parent[t][i] < 0) {
        ++roots;
        EXPECT_EQ(i, r.trees.root[t]);
      }
      int steps = 0;
      for (int q = i; q >= 0 && steps <= n; q = r.trees.parent[t][q]) ++steps;
      EXPECT_LE(steps, n);
    }
    EXPECT_EQ(roots, 1);
  }
  for (int i = 0; n > 2 && i < n; ++i) {
    EXPECT_TRUE(r.trees.children[0][i].empty() || r.trees.children[1][i].empty()) << i;
  }
}

TEST(TopoSearch, DgxA100RingsUseNvSwitches) {
  auto l = load("dgx_a100.xml");
  ASSERT_EQ(l->result.gpus.size(), 8u);
  checkRings(*l);
  checkTrees(l->result);
  EXPECT_EQ(l->result.typeIntra, PathType::kNvl);
  double total = 0;
  for (const auto& ring : l->result.rings) total += ring.bw;
  EXPECT_NEAR(total, 12 * 20.0, 1e-6);  // every GPU's 12 NVLinks to the NVSwitches are used
}

TEST(TopoSearch, DgxH100RingsUseNvSwitches) {
  auto l = load("dgx_h100.xml");
  ASSERT_EQ(l->result.gpus.size(), 8u);
  checkRings(*l);
  checkTrees(l->result);
  EXPECT_EQ(l->result.typeIntra, PathType::kNvl);
  double total = 0;
  for (const auto& ring : l->result.rings) total += ring.bw;
  EXPECT_NEAR(total, 18 * 20.6, 1e-3);
}

TEST(TopoSearch, PcieServerRingsFollowPciLocality) {
  auto l = load("pcie_2s_8gpu.xml");
  ASSERT_EQ(l->result.gpus.size(), 8u);
  checkRings(*l);
  checkTrees(l->result);
  // Two sockets: every ring crosses the CPU interconnect, and crosses it only once each way.
  for (const auto& ring : l->result.rings) {
    int sys = 0;
    for (size_t i = 0; i < ring.order.size(); ++i) {
      int a = l->result.gpus[ring.order[i]], b = l->result.gpus[ring.order[(i + 1) % ring.order.size()]];
      sys += l->paths->get(a, b).type == PathType::kSys;
    }
    EXPECT_EQ(sys, 2);
  }
}

TEST(TopoSearch, NvlinkPairsMixNvlinkAndPci) {
  auto l = load("nvlink_pairs_4gpu.xml");
  ASSERT_EQ(l->result.gpus.size(), 4u);
  checkRings(*l);
  checkTrees(l->result);
  // No pure NVLink ring exists; the ring should still use both NVLink pairs.
  for (const auto& ring : l->result.rings) {
    int nvl = 0;
    for (size_t i = 0; i < ring.order.size(); ++i) {
      int a = l->result.gpus[ring.order[i]], b = l->result.gpus[ring.order[(i + 1) % ring.order.size()]];
      nvl += l->paths->get(a, b).type == PathType::kNvl;
    }
    EXPECT_EQ(nvl, 2);
  }
}

TEST(TopoSearch, NoGpuMachineHasNoRings) {
  auto l = load("cpu_2numa_nogpu.xml");
  EXPECT_TRUE(l->result.gpus.empty());
  EXPECT_TRUE(l->result.rings.empty());
  EXPECT_EQ(l->graph.ofType(NodeType::kCpu).size(), 2u);
}

TEST(TopoSearch, TuningInputsComeFromTheSearch) {
  auto l = load("dgx_a100.xml");
  const AlgoCost& ring = l->result.tuning.at(TunedColl::kAllReduce, TunedAlgo::kRing);
  const AlgoCost& tree = l->result.tuning.at(TunedColl::kAllReduce, TunedAlgo::kTree);
  EXPECT_GT(ring.busBwGBs, 100);
  EXPECT_GT(ring.latencyUs, 0);
  EXPECT_GT(tree.busBwGBs, 0);
  auto pcie = load("pcie_2s_8gpu.xml");
  EXPECT_LT(pcie->result.tuning.at(TunedColl::kAllReduce, TunedAlgo::kRing).busBwGBs, ring.busBwGBs);
}

}  // namespace
}  // namespace chorus::topology
