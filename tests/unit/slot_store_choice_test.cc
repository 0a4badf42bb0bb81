// The slots' store kind chosen by measured times (collectives/host/slot_store_choice.h).
#include "collectives/host/slot_store_choice.h"

#include <gtest/gtest.h>

#include <vector>

namespace chorus::coll {
namespace {

constexpr size_t kBytes = size_t{8} << 20;

// Runs `n` operations whose time depends on the kind chosen; returns the kinds chosen.
std::vector<bool> run(SlotStoreChooser& c, int n, uint64_t plainNs, uint64_t streamedNs, bool fallback = false) {
  std::vector<bool> chosen;
  for (int i = 0; i < n; ++i) {
    const bool streamed = c.choose(CollType::kAllGather, kBytes, fallback);
    c.record(CollType::kAllGather, kBytes, streamed, streamed ? streamedNs : plainNs);
    chosen.push_back(streamed);
  }
  return chosen;
}

// The first and third operations take the rule's answer, the second the other kind; then the faster, except every
// kExploreEvery-th, which tries the slower to keep its time current.
TEST(SlotStoreChooser, TriesBothKindsThenKeepsTheFasterAndExploresTheOther) {
  SlotStoreChooser c;
  const std::vector<bool> got = run(c, 3 + 3 * SlotStoreChooser::kExploreEvery, 3000, 1000);
  EXPECT_FALSE(got[0]);  // the fallback, untimed
  EXPECT_TRUE(got[1]);   // the other kind
  EXPECT_FALSE(got[2]);  // the fallback, timed
  for (size_t i = 3; i < got.size(); ++i) {
    EXPECT_EQ(got[i], i % SlotStoreChooser::kExploreEvery != 0) << "operation " << i;
  }
}

// The first operation of a kind and size pays for first use: its time decides nothing.
TEST(SlotStoreChooser, TheFirstOperationsTimeIsNotTaken) {
  SlotStoreChooser c;
  const uint64_t times[] = {1'000'000'000, 2000, 1000};  // plain (first use), streamed, plain
  for (uint64_t ns : times) {
    const bool streamed = c.choose(CollType::kAllGather, kBytes, false);
    c.record(CollType::kAllGather, kBytes, streamed, ns);
  }
  EXPECT_FALSE(c.choose(CollType::kAllGather, kBytes, false));  // plain: 1000 ns against 2000
}

// When the placement changes, the other kind's next exploration shows it and the chooser follows within a few
// operations.
TEST(SlotStoreChooser, FollowsAChangeOfTheFasterKind) {
  SlotStoreChooser c;
  run(c, 20, 3000, 1000);  // streamed faster: chosen
  const std::vector<bool> after = run(c, 3 * SlotStoreChooser::kExploreEvery, 1000, 3000);
  // Within two exploration periods plain stores are chosen, and stay (except the explorations).
  int plainRun = 0;
  for (size_t i = 2 * SlotStoreChooser::kExploreEvery; i < after.size(); ++i) plainRun += after[i] ? 0 : 1;
  EXPECT_GE(plainRun, static_cast<int>(SlotStoreChooser::kExploreEvery) - 1);
}

// Kinds and size classes are timed apart: a fast size does not decide for a slow one.
TEST(SlotStoreChooser, KeepsKindsAndSizesApart) {
  SlotStoreChooser c;
  run(c, 10, 3000, 1000);  // all-gather of 8 MiB: streamed faster
  // An all-reduce of 8 MiB and an all-gather of 1 MiB start from their fallback.
  EXPECT_FALSE(c.choose(CollType::kAllReduce, kBytes, false));
  EXPECT_FALSE(c.choose(CollType::kAllGather, size_t{1} << 20, false));
  EXPECT_TRUE(c.choose(CollType::kAllReduce, size_t{2} << 20, true));
}

}  // namespace
}  // namespace chorus::coll
