// The Chorus comm backend over ranks that are threads: every operation's result, element by element,
// in-place forms, split and duplicate, and the byte accounting.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

#include "comm/bf16.h"
#include "comm/chorus_comm.h"

namespace chorus::train {
namespace {

template <typename Fn>
void onRanks(int n, Fn fn) {
  auto comms = ChorusComm::initThreads(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { fn(*comms[r]); });
  for (auto& t : threads) t.join();
  std::vector<std::thread> closers;
  for (auto& c : comms) closers.emplace_back([p = c.release()] { delete p; });
  for (auto& t : closers) t.join();
}

class CommTest : public ::testing::TestWithParam<int> {};

TEST_P(CommTest, EveryOperationGivesTheReferenceResult) {
  const int n = GetParam();
  onRanks(n, [n](Comm& c) {
    const int r = c.rank(), count = 37;
    auto val = [](int rank, int i) { return static_cast<float>(rank * 100 + i); };
    std::vector<float> in(count * n), out(count * n);
    for (int i = 0; i < count * n; ++i) in[i] = val(r, i);
    // all-reduce, out of place and in place
    c.allReduce(in.data(), out.data(), count, DType::kFloat32, RedOp::kSum).wait();
    for (int i = 0; i < count; ++i) {
      float s = 0;
      for (int k = 0; k < n; ++k) s += val(k, i);
      ASSERT_EQ(out[i], s);
    }
    std::vector<float> inplace(in);
    c.allReduce(inplace.data(), inplace.data(), count, DType::kFloat32, RedOp::kMax).wait();
    for (int i = 0; i < count; ++i) ASSERT_EQ(inplace[i], val(n - 1, i));
    // reduce-scatter in place: block r of the sum stays at block r
    inplace = in;
    c.reduceScatter(inplace.data(), inplace.data() + r * count, count, DType::kFloat32, RedOp::kSum).wait();
    for (int i = 0; i < count; ++i) {
      float s = 0;
      for (int k = 0; k < n; ++k) s += val(k, r * count + i);
      ASSERT_EQ(inplace[r * count + i], s);
    }
    // all-gather in place
    std::vector<float> g(count * n, -1);
    for (int i = 0; i < count; ++i) g[r * count + i] = val(r, i);
    c.allGather(g.data() + r * count, g.data(), count, DType::kFloat32).wait();
    for (int k = 0; k < n; ++k)
      for (int i = 0; i < count; ++i) ASSERT_EQ(g[k * count + i], val(k, i));
    // broadcast and reduce from the last rank
    std::vector<float> b(count, static_cast<float>(r));
    c.broadcast(b.data(), count, DType::kFloat32, n - 1).wait();
    for (float x : b) ASSERT_EQ(x, n - 1);
    std::vector<double> red(3, 1.0 + r);
    c.reduce(red.data(), red.data(), 3, DType::kFloat64, RedOp::kSum, n - 1).wait();
    if (r == n - 1) {
      ASSERT_EQ(red[0], n * (n + 1) / 2.0);
    }
    // a ring of sends and receives in one call
    std::vector<float> to(5, static_cast<float>(r)), from(5, -1);
    c.sendRecv({{true, to.data(), 5, DType::kFloat32, (r + 1) % n},
                {false, from.data(), 5, DType::kFloat32, (r + n - 1) % n}})
        .wait();
    for (float x : from) ASSERT_EQ(x, (r + n - 1) % n);
    // bfloat16 sums
    std::vector<uint16_t> h(4, floatToBf16(1.0f));
    c.allReduce(h.data(), h.data(), 4, DType::kBfloat16, RedOp::kSum).wait();
    ASSERT_EQ(bf16ToFloat(h[0]), static_cast<float>(n));
    c.barrier();
    // split into even and odd ranks, and an independent duplicate
    auto sub = c.split(r % 2, r);
    ASSERT_NE(sub, nullptr);
    ASSERT_EQ(sub->size(), (n + 1 - r % 2) / 2);
    ASSERT_EQ(sub->rank(), r / 2);
    auto dup = c.duplicate();
    int64_t one = 1;
    dup->allReduce(&one, &one, 1, DType::kInt64, RedOp::kSum).wait();
    ASSERT_EQ(one, n);
    // accounting: an all-reduce of 37 floats sends 2(n-1)/n of it by the ring's count
    const CommStats::Row& ar = c.stats().rows[static_cast<int>(CollKind::kAllReduce)];
    ASSERT_EQ(ar.calls, 3);
    ASSERT_EQ(ar.messageBytes, 2 * 37 * 4 + 8);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, CommTest, ::testing::Values(1, 2, 3, 5));

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16ToFloat(floatToBf16(1.00390625f)), 1.0f);       // halfway: to even
  EXPECT_EQ(bf16ToFloat(floatToBf16(1.01171875f)), 1.015625f);  // halfway: up to even
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(NAN))));
}

}  // namespace
}  // namespace chorus::train
