// The in-memory neighbour snapshot: after any one data-parallel rank is lost, the survivors rebuild exactly
// the state every rank held at the snapshot, for every ZeRO stage; two neighbours lost together is an error.
#include <gtest/gtest.h>

#include <thread>

#include "comm/chorus_comm.h"
#include "parallel/flash_snapshot.h"

namespace chorus::train {
namespace {

class FlashSnapshotTest : public ::testing::TestWithParam<int> {};

TEST_P(FlashSnapshotTest, SurvivorsRebuildTheWholeState) {
  const int zero = GetParam(), D = 4;
  ModelConfig cfg;
  cfg.layers = 2;
  cfg.heads = 2;
  cfg.dModel = 16;
  cfg.seqLen = 8;
  auto comms = ChorusComm::initThreads(D);
  for (int lostRank = 0; lostRank < D; ++lostRank) {
    std::vector<std::thread> threads;
    for (int r = 0; r < D; ++r) {
      threads.emplace_back([&, r] {
        Comm& dp = *comms[r];
        ParamLayout layout(cfg, ModelPart::whole(cfg), 16 * D);
        auto engine = DataParallel::create({zero, 1000, false}, layout, dp);
        // Every element of every buffer distinct, so a misplaced range shows.
        std::vector<float> p(layout.size()), m(p.size()), v(p.size());
        for (size_t i = 0; i < p.size(); ++i) {
          p[i] = static_cast<float>(i);
          m[i] = static_cast<float>(i) + 0.25f;
          v[i] = static_cast<float>(i) + 0.5f;
        }
        engine->importFull(p.data(), m.data(), v.data());
        FlashSnapshot snap;
        snap.take(7, *engine, dp);
        auto survivors = dp.split(r == lostRank ? -1 : 0, r);
        // Ranks 2 and 3 lost together: 3 held 2's copy.
        auto pair = dp.split(r == 2 || r == 3 ? -1 : 0, r);
        if (survivors) {
          std::vector<float> rp, rm, rv;
          snap.rebuild({lostRank}, layout.size(), *survivors, rp, rm, rv);
          EXPECT_EQ(snap.step(), 7);
          EXPECT_EQ(rp, p);
          EXPECT_EQ(rm, m);
          EXPECT_EQ(rv, v);
        }
        if (pair && lostRank == 0) {
          std::vector<float> rp, rm, rv;
          EXPECT_THROW(snap.rebuild({2, 3}, layout.size(), *pair, rp, rm, rv), std::runtime_error);
        }
      });
    }
    for (auto& t : threads) t.join();
  }
  std::vector<std::thread> closers;
  for (auto& c : comms) closers.emplace_back([p = c.release()] { delete p; });
  for (auto& t : closers) t.join();
}

INSTANTIATE_TEST_SUITE_P(Zero, FlashSnapshotTest, ::testing::Values(0, 1, 2, 3));

}  // namespace
}  // namespace chorus::train
