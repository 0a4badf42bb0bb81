// Each thread keeps the plans of its last four different operations (core/launch.cc): a loop that alternates a
// few operations over moving buffers plans each one once and gets every result right; a fifth operation in the
// loop evicts the least recently used plan, so five alternating operations are planned on every call.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "chorus/chorus.h"
#include "common/on_threads.h"
#include "core/launch.h"

namespace {

using chorus::test::onThreads;

int32_t value(int rank, size_t i) {
  return static_cast<int32_t>(rank * 1000 + static_cast<int>(i));
}

// Runs `shapes` different operations (1-5 of: a 100-element all-reduce, a 33-element broadcast from rank 1, a
// 7-element in-place all-reduce, a ring of 50-element sends, a 20-element all-gather), `rounds` times over buffers
// that move by one element each round, checking every element; returns the plans this thread made.
uint64_t alternate(chorusComm_t c, int rank, int n, int shapes, int rounds) {
  const uint64_t before = chorus::core::plansMadeOnThisThread();
  std::vector<int32_t> in(400), out(400);
  for (int round = 0; round < rounds; ++round) {
    int32_t* src = in.data() + round % 3;
    int32_t* dst = out.data() + round % 3;
    auto fill = [&](size_t k) {
      for (size_t i = 0; i < k; ++i) src[i] = value(rank, i);
      std::fill(out.begin(), out.end(), -1);
    };
    auto sum = [&](size_t i) {
      int32_t s = 0;
      for (int q = 0; q < n; ++q) s += value(q, i);
      return s;
    };
    fill(100);
    EXPECT_EQ(chorusAllReduce(src, dst, 100, chorusInt32, chorusSum, c, nullptr), chorusSuccess);
    for (size_t i = 0; i < 100; ++i) EXPECT_EQ(dst[i], sum(i)) << "all-reduce, round " << round;
    if (shapes >= 2) {
      fill(33);
      EXPECT_EQ(chorusBroadcast(src, dst, 33, chorusInt32, 1, c, nullptr), chorusSuccess);
      for (size_t i = 0; i < 33; ++i) EXPECT_EQ(dst[i], value(1, i)) << "broadcast, round " << round;
    }
    if (shapes >= 3) {
      fill(7);
      EXPECT_EQ(chorusAllReduce(src, src, 7, chorusInt32, chorusSum, c, nullptr), chorusSuccess);
      for (size_t i = 0; i < 7; ++i) EXPECT_EQ(src[i], sum(i)) << "in-place all-reduce, round " << round;
    }
    if (shapes >= 4) {
      fill(50);
      EXPECT_EQ(chorusGroupStart(), chorusSuccess);
      chorusSend(src, 50, chorusInt32, (rank + 1) % n, c, nullptr);
      chorusRecv(dst, 50, chorusInt32, (rank + n - 1) % n, c, nullptr);
      EXPECT_EQ(chorusGroupEnd(), chorusSuccess);
      for (size_t i = 0; i < 50; ++i) EXPECT_EQ(dst[i], value((rank + n - 1) % n, i)) << "send/recv, round " << round;
    }
    if (shapes >= 5) {
      fill(20);
      EXPECT_EQ(chorusAllGather(src, dst, 20, chorusInt32, c, nullptr), chorusSuccess);
      for (size_t i = 0; i < 20 * static_cast<size_t>(n); ++i) {
        EXPECT_EQ(dst[i], value(static_cast<int>(i / 20), i % 20)) << "all-gather, round " << round;
      }
    }
  }
  return chorus::core::plansMadeOnThisThread() - before;
}

TEST(PlanMemo, FourAlternatingOperationsArePlannedOnceEach) {
  const int n = 3;
  std::vector<chorusComm_t> comms(n);
  ASSERT_EQ(chorusCommInitAll(comms.data(), n, nullptr), chorusSuccess);
  std::vector<uint64_t> plans(n);
  onThreads(n, [&](int r) { plans[r] = alternate(comms[r], r, n, 4, 6); });
  for (int r = 0; r < n; ++r) EXPECT_EQ(plans[r], 4u) << "rank " << r;
  // A fifth operation in the loop: the least recently used plan is always the one needed next.
  onThreads(n, [&](int r) { plans[r] = alternate(comms[r], r, n, 5, 3); });
  for (int r = 0; r < n; ++r) EXPECT_EQ(plans[r], 15u) << "rank " << r;
  for (chorusComm_t c : comms) chorusCommDestroy(c);
}

}  // namespace
