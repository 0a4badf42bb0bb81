// Schedule tests of the one-source algorithms: every rank's calls are recorded with StepRecorder and run
// together symbolically over bounded FIFOs (algo_sim.h), for ring, tree and direct variants, many rank counts,
// roots, counts, chunk sizes, channel counts, FIFO depths, non-identity rings and double binary trees.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "unit/algo_sim.h"
#include "unit/step_recorder.h"

namespace chorus::coll::sim {
namespace {

// Per channel: a shuffled ring, the reversed ring, and a shuffled ring rotated by one (none the identity
// for nranks > 2).
std::vector<std::vector<int>> testRings(int nranks, int nChannels) {
  std::vector<std::vector<int>> rings;
  std::mt19937 rng(static_cast<unsigned>(nranks) * 7919u + 1u);
  for (int c = 0; c < nChannels; ++c) {
    std::vector<int> ring(nranks);
    std::iota(ring.begin(), ring.end(), 0);
    if (c % 3 == 1) {
      std::reverse(ring.begin(), ring.end());
    } else {
      std::shuffle(ring.begin(), ring.end(), rng);
      if (c % 3 == 2) std::rotate(ring.begin(), ring.begin() + (nranks > 1 ? 1 : 0), ring.end());
    }
    rings.push_back(ring);
  }
  return rings;
}

// All-reduce: the two trees of a double binary tree, then a ternary tree over a shuffled order (three
// children per node). Broadcast and reduce: trees rooted at the root, binary over a shuffled order,
// ternary, and a chain.
std::vector<Tree> testTrees(Coll coll, int nranks, int root, int nChannels) {
  std::vector<Tree> trees;
  std::mt19937 rng(static_cast<unsigned>(nranks) * 104729u + static_cast<unsigned>(root));
  std::vector<Tree> dbt = doubleBinaryTree(nranks);
  for (int c = 0; c < nChannels; ++c) {
    std::vector<int> order;
    order.push_back(coll == Coll::kAllReduce ? (c == 2 ? nranks / 2 : 0) : root);
    for (int r = 0; r < nranks; ++r) {
      if (r != order[0]) order.push_back(r);
    }
    if (coll == Coll::kAllReduce) {
      if (c < 2) {
        trees.push_back(dbt[c]);
      } else {
        std::shuffle(order.begin() + 1, order.end(), rng);
        trees.push_back(heapTree(order, 3));
      }
    } else {
      const int arity = c == 0 ? 2 : (c == 1 ? 3 : 1);
      if (c == 0) std::shuffle(order.begin() + 1, order.end(), rng);
      if (c == 2) std::reverse(order.begin() + 1, order.end());
      trees.push_back(heapTree(order, arity));
    }
  }
  return trees;
}

SimConfig makeConfig(Coll coll, Algo algo, int nranks, int root, size_t count, size_t chunk, size_t grain,
                     int nChannels, size_t slots, bool inPlace) {
  SimConfig cfg;
  cfg.coll = coll;
  cfg.algo = algo;
  cfg.nranks = nranks;
  cfg.root = root;
  cfg.count = count;
  cfg.chunkElems = chunk;
  cfg.grainElems = grain;
  cfg.nChannels = nChannels;
  cfg.slots = slots;
  cfg.inPlace = inPlace;
  if (algo == Algo::kRing) {
    cfg.rings = testRings(nranks, nChannels);
  } else if (algo == Algo::kTree) {
    cfg.trees = testTrees(coll, nranks, root, nChannels);
  }
  return cfg;
}

bool ringNeedsTwoSlots(Coll coll, Algo algo, int nranks) {
  // Every rank of a ring all-reduce, all-gather or reduce-scatter sends first; with one slot per edge every
  // edge is then full and every rank's next call needs both a message and room: see RingWithOneSlotDeadlocks.
  // (With two ranks the all-gather and reduce-scatter have no call that both receives and sends.)
  if (algo != Algo::kRing) return false;
  if (coll == Coll::kAllReduce) return nranks > 1;
  return (coll == Coll::kAllGather || coll == Coll::kReduceScatter) && nranks > 2;
}

struct ChunkCase {
  size_t chunk;
  size_t grain;
};

using Param = std::tuple<Coll, Algo, int>;

class AlgoScheduleTest : public ::testing::TestWithParam<Param> {};

TEST_P(AlgoScheduleTest, CompletesWithExactResults) {
  const auto [coll, algo, nranks] = GetParam();
  const bool blockwise = coll == Coll::kAllGather || coll == Coll::kReduceScatter;
  std::vector<size_t> counts = {0, 1, 7, 1021};
  if (!blockwise) {
    counts.push_back(65537);
  } else if (nranks <= 8) {
    counts.push_back(4099);
  }
  const std::vector<ChunkCase> chunks = {{1, 1}, {3, 1}, {64, 16}, {1000, 16}, {4096, 16}};
  std::vector<int> roots = {0};
  if (coll == Coll::kBroadcast || coll == Coll::kReduce) {
    roots = {0, nranks - 1, nranks / 2};
    std::sort(roots.begin(), roots.end());
    roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  }
  const size_t minSlots = ringNeedsTwoSlots(coll, algo, nranks) ? 2 : 1;
  int runs = 0;
  for (int root : roots) {
    for (size_t count : counts) {
      for (const ChunkCase& cc : chunks) {
        if (count == 0 && cc.chunk != 64) continue;
        // The big counts (many loops of big chunks) run a narrower sweep: one root, big chunks, 1 and 3
        // channels, the smallest and the largest FIFO; the small counts run everything.
        const bool big = count > 4096;
        if (cc.chunk == 1 && count > 1000 && nranks > 8) continue;  // one-element chunks: smaller cases cover them
        if (big && (cc.chunk < 1000 || root != roots.back())) continue;
        // A direct algorithm moves every message whole on one channel: chunks and channels do not apply.
        if (algo == Algo::kDirect && cc.chunk != 64) continue;
        for (int nChannels = 1; nChannels <= 3; ++nChannels) {
          if (big && nChannels == 2) continue;
          if (algo == Algo::kDirect && nChannels > 1) continue;
          for (size_t slots : {size_t{1}, size_t{2}, size_t{8}}) {
            if (slots < minSlots || (big && slots == 2 && minSlots == 1)) continue;
            for (bool inPlace : {false, true}) {
              if (inPlace && (slots != 2 || big)) continue;
              SimConfig cfg =
                  makeConfig(coll, algo, nranks, root, count, cc.chunk, cc.grain, nChannels, slots, inPlace);
              SimResult res = simulate(cfg);
              ASSERT_TRUE(res.ok) << res.report;
              if (count == 0) {
                EXPECT_EQ(res.steps, 0u) << describe(cfg);
              }
              ++runs;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 0);
}

std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  return std::string(algoName(std::get<1>(info.param))) + collName(std::get<0>(info.param)) + "_n" +
         std::to_string(std::get<2>(info.param));
}

const int kRankCounts[] = {1, 2, 3, 4, 5, 7, 8, 13, 16};

INSTANTIATE_TEST_SUITE_P(Ring, AlgoScheduleTest,
                         ::testing::Combine(::testing::Values(Coll::kAllReduce, Coll::kAllGather, Coll::kReduceScatter,
                                                              Coll::kBroadcast, Coll::kReduce),
                                            ::testing::Values(Algo::kRing), ::testing::ValuesIn(kRankCounts)),
                         paramName);

INSTANTIATE_TEST_SUITE_P(Tree, AlgoScheduleTest,
                         ::testing::Combine(::testing::Values(Coll::kAllReduce, Coll::kBroadcast, Coll::kReduce),
                                            ::testing::Values(Algo::kTree), ::testing::ValuesIn(kRankCounts)),
                         paramName);

INSTANTIATE_TEST_SUITE_P(Direct, AlgoScheduleTest,
                         ::testing::Combine(::testing::Values(Coll::kAllReduce, Coll::kAllGather, Coll::kReduceScatter,
                                                              Coll::kBroadcast, Coll::kReduce),
                                            ::testing::Values(Algo::kDirect), ::testing::ValuesIn(kRankCounts)),
                         paramName);

// A direct reduction folds the contributions in rank order on every rank (bit-identical results): the first
// arrives (or is this rank's own), each later one is reduced into the output, and only the last applies the
// post-divisor.
TEST(AlgoSchedule, DirectReducesInRankOrder) {
  const int nranks = 5;
  for (int rank = 0; rank < nranks; ++rank) {
    SimConfig cfg = makeConfig(Coll::kAllReduce, Algo::kDirect, nranks, 0, 8, 64, 1, 1, 1, false);
    std::vector<Step> steps = recordSchedule(cfg, 0, rank);
    ASSERT_EQ(steps.size(), static_cast<size_t>(2 * (nranks - 1) + 1)) << rank;
    for (int i = 0; i < nranks - 1; ++i) EXPECT_EQ(steps[i].kind, StepKind::kSend);
    for (int r = 0; r < nranks; ++r) {
      const Step& s = steps[static_cast<size_t>(nranks - 1 + r)];
      StepKind want = r == rank ? (r == 0 ? StepKind::kLocalCopy : StepKind::kLocalReduce)
                                : (r == 0 ? StepKind::kRecv : StepKind::kRecvReduceOutput);
      EXPECT_EQ(s.kind, want) << "rank " << rank << " fold " << r;
      if (r != rank) {
        EXPECT_EQ(s.recvPeers[0], r);
      }
      EXPECT_EQ(s.postOp, r == nranks - 1) << "rank " << rank << " fold " << r;
    }
  }
}

// A direct reduce: every rank but the root sends its input to the root once and writes nothing; the root folds the
// contributions in rank order, as a direct all-reduce does, and in place (root > 0) reads its own from the copy.
TEST(AlgoSchedule, DirectReduceSendsToTheRootOnly) {
  const int nranks = 5;
  for (int root : {0, 2, nranks - 1}) {
    for (int rank = 0; rank < nranks; ++rank) {
      SimConfig cfg = makeConfig(Coll::kReduce, Algo::kDirect, nranks, root, 8, 64, 1, 1, 1, false);
      std::vector<Step> steps = recordSchedule(cfg, 0, rank);
      if (rank != root) {
        ASSERT_EQ(steps.size(), 1u) << rank;
        EXPECT_EQ(steps[0].kind, StepKind::kSend);
        EXPECT_EQ(steps[0].sendPeers[0], root);
        continue;
      }
      ASSERT_EQ(steps.size(), static_cast<size_t>(nranks)) << rank;
      for (int r = 0; r < nranks; ++r) {
        StepKind want = r == rank ? (r == 0 ? StepKind::kLocalCopy : StepKind::kLocalReduce)
                                  : (r == 0 ? StepKind::kRecv : StepKind::kRecvReduceOutput);
        EXPECT_EQ(steps[static_cast<size_t>(r)].kind, want) << "root " << root << " fold " << r;
        EXPECT_EQ(steps[static_cast<size_t>(r)].postOp, r == nranks - 1);
      }
    }
    SimConfig inPlace = makeConfig(Coll::kReduce, Algo::kDirect, nranks, root, 8, 64, 1, 1, 1, true);
    EXPECT_TRUE(simulate(inPlace).ok) << root;
  }
}

// In place, a direct reduction writes its output before it folds in a later rank's own contribution: reading
// the input there would read the output. The executors read a copy (plan.h's Staging); without it the simulator
// reports the hazard.
TEST(AlgoSchedule, DirectInPlaceNeedsTheCopy) {
  SimConfig cfg = makeConfig(Coll::kAllReduce, Algo::kDirect, 3, 0, 8, 64, 1, 1, 1, true);
  EXPECT_TRUE(simulate(cfg).ok);
  cfg.mutate = [](int, int, std::vector<Step>& s) {
    for (Step& x : s) x.inputCopy = false;
  };
  SimResult res = simulate(cfg);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.report.find("after its output alias was written"), std::string::npos) << res.report;
}

// The ring all-reduce, all-gather and reduce-scatter need two slots per edge (NCCL has NCCL_STEPS = 8):
// with one, all ranks send first, every edge is full, and each rank's next call waits both for a message
// (there is one) and for room (there is none). The simulator must find and name that cycle.
TEST(AlgoSchedule, RingWithOneSlotDeadlocks) {
  for (Coll coll : {Coll::kAllReduce, Coll::kAllGather, Coll::kReduceScatter}) {
    for (int nranks : {2, 3, 5}) {
      if (!ringNeedsTwoSlots(coll, Algo::kRing, nranks)) continue;
      SimConfig cfg = makeConfig(coll, Algo::kRing, nranks, 0, 100, 8, 1, 1, 1, false);
      SimResult res = simulate(cfg);
      EXPECT_FALSE(res.ok) << describe(cfg);
      EXPECT_NE(res.report.find("wait cycle"), std::string::npos) << res.report;
      EXPECT_NE(res.report.find("stuck: "), std::string::npos) << res.report;
    }
  }
}

// The ring all-reduce's call sequence per loop is NCCL's runRing: send, n-2 recvReduceSend,
// recvReduceCopySend, n-2 recvCopySend, recv; one loop when the count fits.
TEST(AlgoSchedule, RingAllReduceCallSequence) {
  const int nranks = 5;
  SimConfig cfg = makeConfig(Coll::kAllReduce, Algo::kRing, nranks, 0, 5 * 16, 16, 1, 1, 2, false);
  std::vector<Step> steps = recordSchedule(cfg, 0, 3);
  std::vector<StepKind> want = {StepKind::kSend};
  for (int j = 0; j < nranks - 2; ++j) want.push_back(StepKind::kRecvReduceSend);
  want.push_back(StepKind::kRecvReduceCopySend);
  for (int j = 0; j < nranks - 2; ++j) want.push_back(StepKind::kRecvCopySend);
  want.push_back(StepKind::kRecv);
  ASSERT_EQ(steps.size(), want.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].kind, want[i]) << i;
    EXPECT_EQ(steps[i].n, 16u);
  }
  // The recorder keeps the ring's peers: rank 3 receives from its predecessor and sends to its successor.
  const std::vector<int>& ring = cfg.rings[0];
  const int pos = static_cast<int>(std::find(ring.begin(), ring.end(), 3) - ring.begin());
  ASSERT_EQ(steps[0].nSendPeers, 1);
  ASSERT_EQ(steps[0].nRecvPeers, 1);
  EXPECT_EQ(steps[0].sendPeers[0], ring[(pos + 1) % nranks]);
  EXPECT_EQ(steps[0].recvPeers[0], ring[(pos + nranks - 1) % nranks]);
  // The postOp is applied exactly once, where the sum is complete; the own block is rank 3's.
  EXPECT_TRUE(steps[nranks - 1].postOp);
  EXPECT_EQ(steps[nranks - 1].outOff, 3u * 16u);
}

// One rank: a localCopy per chunk, post-divided for the reductions and not for the copies.
TEST(AlgoSchedule, OneRankIsALocalCopy) {
  for (Coll coll : {Coll::kAllReduce, Coll::kAllGather, Coll::kReduceScatter, Coll::kBroadcast, Coll::kReduce}) {
    SimConfig cfg = makeConfig(coll, Algo::kRing, 1, 0, 10, 4, 1, 1, 1, false);
    std::vector<Step> steps = recordSchedule(cfg, 0, 0);
    ASSERT_EQ(steps.size(), 3u) << collName(coll);
    for (const Step& s : steps) {
      EXPECT_EQ(s.kind, StepKind::kLocalCopy);
      EXPECT_EQ(s.inOff, s.outOff);
      EXPECT_EQ(s.postOp, coll != Coll::kAllGather && coll != Coll::kBroadcast) << collName(coll);
    }
  }
}

// A schedule bug must be caught: a root that believes it has a child which sends elsewhere waits forever.
TEST(AlgoSchedule, DetectsAnInconsistentTree) {
  SimConfig cfg = makeConfig(Coll::kAllReduce, Algo::kTree, 4, 0, 64, 8, 1, 1, 2, false);
  cfg.trees[0].children[0].push_back(3);  // rank 3's parent is still rank 1
  SimResult res = simulate(cfg);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.report.find("stuck: channel 0 rank 0"), std::string::npos) << res.report;
}

// The simulator catches schedule bugs: each mutation of a correct ring all-reduce schedule must fail.
TEST(AlgoSchedule, DetectsMutatedSchedules) {
  struct Mutation {
    const char* name;
    const char* expect;  // a phrase of the report
    std::function<void(int, int, std::vector<Step>&)> edit;
  };
  const Mutation mutations[] = {
      {"a dropped final recv", "never received",
       [](int, int r, std::vector<Step>& s) {
         if (r == 1) s.pop_back();
       }},
      {"a recv into the wrong block", "written 2 times",
       [](int, int r, std::vector<Step>& s) {
         if (r == 2) s.back().outOff = s[s.size() - 2].outOff;
       }},
      {"a post-divided partial sum reduced again", "reduced-after-post",
       [](int, int r, std::vector<Step>& s) {
         if (r == 0) s[1].postOp = true;  // rank 0's first recvReduceSend
       }},
      {"a wrong input block", "holds",
       [](int, int r, std::vector<Step>& s) {
         if (r == 1) s[0].inOff = (s[0].inOff + 16) % 64;
       }},
      {"a write past the output", "past its end",
       [](int, int r, std::vector<Step>& s) {
         if (r == 3) s.back().outOff = 1000;
       }},
      {"a message size mismatch", "receives",
       [](int, int r, std::vector<Step>& s) {
         if (r == 0) s[0].n -= 1;
       }},
  };
  for (const Mutation& m : mutations) {
    SimConfig cfg = makeConfig(Coll::kAllReduce, Algo::kRing, 4, 0, 4 * 16, 16, 1, 1, 2, false);
    cfg.mutate = m.edit;
    SimResult res = simulate(cfg);
    EXPECT_FALSE(res.ok) << m.name;
    EXPECT_NE(res.report.find(m.expect), std::string::npos) << m.name << "\n" << res.report;
  }
}

}  // namespace
}  // namespace chorus::coll::sim
