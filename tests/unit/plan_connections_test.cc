// Planning's connections (collectives/plan/plan.h): a ring, tree or direct plan connects exactly the pairs and
// directions its algorithm moves data in, as the algorithm's recorded schedule (algo_sim.h) shows. A pair that is
// connected but carries nothing can fail a program: the rank that listens posts its end and moves on, and the rank
// still connecting to it is refused once it has finished its part and exited (a broadcast's root receives nothing,
// a reduce's root sends nothing, a direct broadcast's other ranks exchange nothing).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "collectives/plan/plan.h"
#include "unit/algo_sim.h"
#include "unit/step_recorder.h"

namespace chorus::coll {
namespace {

using Direction = std::tuple<int, int, bool>;  // (peer, lane, send)

CollType collType(sim::Coll c) {
  switch (c) {
    case sim::Coll::kAllReduce: return CollType::kAllReduce;
    case sim::Coll::kAllGather: return CollType::kAllGather;
    case sim::Coll::kReduceScatter: return CollType::kReduceScatter;
    case sim::Coll::kBroadcast: return CollType::kBroadcast;
    case sim::Coll::kReduce: return CollType::kReduce;
  }
  return CollType::kAllReduce;
}

Algo planAlgo(sim::Algo a) {
  switch (a) {
    case sim::Algo::kRing: return Algo::kRing;
    case sim::Algo::kTree: return Algo::kTree;
    case sim::Algo::kDirect: return Algo::kDirect;
  }
  return Algo::kRing;
}

// One operation's geometry, shared by the simulator's configuration and the plan's topology: two channels of
// shuffled rings and of binary trees over shuffled orders, the trees rooted at the operation's root (so that the
// plan's re-rooting leaves them as they are). Direct algorithms use one channel and neither.
struct Geometry {
  sim::SimConfig cfg;
  TopoView topo;
};

Geometry geometry(sim::Coll coll, sim::Algo algo, int nranks, int root) {
  Geometry g;
  sim::SimConfig& cfg = g.cfg;
  cfg.coll = coll;
  cfg.algo = algo;
  cfg.nranks = nranks;
  cfg.root = root;
  cfg.count = 64;
  cfg.chunkElems = 16;
  cfg.grainElems = 1;
  cfg.nChannels = algo == sim::Algo::kDirect ? 1 : 2;
  std::mt19937 rng(static_cast<unsigned>(nranks * 31 + root));
  for (int c = 0; c < 2; ++c) {
    std::vector<int> order(static_cast<size_t>(nranks));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    cfg.rings.push_back(order);
    g.topo.rings.push_back(order);
    std::swap(*order.begin(), *std::find(order.begin(), order.end(), root));
    cfg.trees.push_back(sim::heapTree(order, 2));
    TreeView& t = g.topo.trees[c];
    t.root = root;
    t.parent = cfg.trees.back().parent;
    t.children = cfg.trees.back().children;
  }
  return g;
}

// Every direction rank `rank`'s schedule moves a message in, on its channel's lane.
std::set<Direction> usedDirections(const sim::SimConfig& cfg, int rank) {
  std::set<Direction> used;
  for (int ch = 0; ch < cfg.nChannels; ++ch) {
    for (const Step& s : sim::recordSchedule(cfg, ch, rank)) {
      const StepTraits t = stepTraits(s.kind);
      for (int i = 0; t.recvs && i < s.nRecvPeers; ++i) used.insert({s.recvPeers[i], ch, false});
      for (int i = 0; t.sends && i < s.nSendPeers; ++i) used.insert({s.sendPeers[i], ch, true});
    }
  }
  return used;
}

// Every connection the plan of the same operation lists at `rank`; none twice.
std::set<Direction> plannedDirections(Geometry& g, int rank, std::vector<int>* buf) {
  const sim::SimConfig& cfg = g.cfg;
  CollOp op;
  op.type = collType(cfg.coll);
  op.algo = planAlgo(cfg.algo);
  op.nChannels = cfg.nChannels;
  op.chunkBytes = 64;
  op.root = cfg.root;
  op.count = cfg.count;
  op.dtype = reduce::DType::kInt32;
  op.sendbuff = buf->data();
  op.recvbuff = buf->data() + cfg.count * static_cast<size_t>(cfg.nranks);
  g.topo.ringIndex.clear();
  for (const std::vector<int>& ring : g.topo.rings) {
    g.topo.ringIndex.push_back(static_cast<int>(std::find(ring.begin(), ring.end(), rank) - ring.begin()));
  }
  PlanContext ctx;
  ctx.rank = rank;
  ctx.nranks = cfg.nranks;
  ctx.topo = &g.topo;
  ctx.slotBytes = 4096;
  Plan plan;
  planWork({op}, ctx, &plan);
  std::set<Direction> planned;
  for (const ConnKey& k : plan.connections) {
    EXPECT_TRUE(planned.insert({k.peer, k.lane, k.send}).second) << "listed twice: peer " << k.peer;
  }
  return planned;
}

TEST(PlanConnections, ExactlyTheDirectionsTheAlgorithmUses) {
  const std::vector<std::pair<sim::Algo, std::vector<sim::Coll>>> algos = {
      {sim::Algo::kRing,
       {sim::Coll::kAllReduce, sim::Coll::kAllGather, sim::Coll::kReduceScatter, sim::Coll::kBroadcast,
        sim::Coll::kReduce}},
      {sim::Algo::kTree, {sim::Coll::kAllReduce, sim::Coll::kBroadcast, sim::Coll::kReduce}},
      {sim::Algo::kDirect,
       {sim::Coll::kAllReduce, sim::Coll::kAllGather, sim::Coll::kReduceScatter, sim::Coll::kBroadcast,
        sim::Coll::kReduce}}};
  int checked = 0;
  for (const auto& [algo, colls] : algos) {
    for (sim::Coll coll : colls) {
      for (int nranks : {2, 3, 5, 8, 13}) {
        std::vector<int> buf(static_cast<size_t>(64 * 2 * nranks));
        for (int root : {0, nranks / 2, nranks - 1}) {
          Geometry g = geometry(coll, algo, nranks, root);
          for (int rank = 0; rank < nranks; ++rank) {
            const std::set<Direction> used = usedDirections(g.cfg, rank);
            EXPECT_FALSE(used.empty());
            EXPECT_EQ(plannedDirections(g, rank, &buf), used)
                << "algorithm " << static_cast<int>(algo) << ", collective " << static_cast<int>(coll) << ", " << nranks
                << " ranks, root " << root << ", rank " << rank;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 13 * 3 * (2 + 3 + 5 + 8 + 13));
}

// One rank connects nothing, whatever the algorithm.
TEST(PlanConnections, OneRankConnectsNothing) {
  for (sim::Algo algo : {sim::Algo::kRing, sim::Algo::kTree, sim::Algo::kDirect}) {
    for (sim::Coll coll : {sim::Coll::kAllReduce, sim::Coll::kBroadcast, sim::Coll::kReduce}) {
      std::vector<int> buf(128);
      Geometry g = geometry(coll, algo, 1, 0);
      EXPECT_TRUE(plannedDirections(g, 0, &buf).empty()) << static_cast<int>(algo);
    }
  }
}

// The rule itself: a broadcast only leaves its root, a reduce only reaches it, the others join every pair.
TEST(PlanConnections, DirectBroadcastAndReduceCarryDataOnTheRootsPairsOnly) {
  EXPECT_TRUE(directCarries(CollType::kBroadcast, 2, 2, 0));
  EXPECT_FALSE(directCarries(CollType::kBroadcast, 2, 0, 2));
  EXPECT_FALSE(directCarries(CollType::kBroadcast, 2, 0, 1));
  EXPECT_TRUE(directCarries(CollType::kReduce, 2, 0, 2));
  EXPECT_FALSE(directCarries(CollType::kReduce, 2, 2, 0));
  EXPECT_FALSE(directCarries(CollType::kReduce, 2, 0, 1));
  for (CollType t : {CollType::kAllReduce, CollType::kAllGather, CollType::kReduceScatter}) {
    EXPECT_TRUE(directCarries(t, 2, 0, 1));
    EXPECT_TRUE(directCarries(t, 2, 1, 0));
  }
}

}  // namespace
}  // namespace chorus::coll
