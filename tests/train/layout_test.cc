// The flat parameter layout, tensor-parallel slicing, bucket plans and initialisation.
#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "model/init.h"
#include "model/param_layout.h"
#include "parallel/bucket_plan.h"

namespace chorus::train {
namespace {

ModelConfig smallModel() {
  ModelConfig c;
  c.layers = 3;
  c.heads = 4;
  c.dModel = 16;
  c.seqLen = 8;
  return c;
}

TEST(ParamLayout, UnitsTileTheBufferAndHoldEveryTensor) {
  ModelConfig cfg = smallModel();
  for (int64_t multiple : {16, 32, 48, 128}) {
    ParamLayout l(cfg, ModelPart::whole(cfg), multiple);
    int64_t at = 0;
    for (const UnitSpec& u : l.units()) {
      EXPECT_EQ(u.offset, at);
      EXPECT_EQ(u.size % multiple, 0) << u.name;
      at += u.size;
    }
    EXPECT_EQ(at, l.size());
    int64_t params = 0;
    for (const TensorSpec& t : l.tensors()) {
      const UnitSpec& u = l.units()[t.unit];
      EXPECT_GE(t.offset, u.offset);
      EXPECT_LE(t.offset + t.size(), u.offset + u.size) << t.name;
      params += t.size();
    }
    EXPECT_EQ(params, cfg.paramCount());
    EXPECT_EQ(l.units().size(), static_cast<size_t>(cfg.layers + 2));
  }
}

TEST(ParamLayout, TensorParallelSlicesPartitionEveryFullTensor) {
  ModelConfig cfg = smallModel();
  for (int tp : {1, 2, 4}) {
    std::vector<ParamLayout> parts;
    for (int r = 0; r < tp; ++r) {
      ModelPart p = ModelPart::whole(cfg);
      p.tpSize = tp;
      p.tpRank = r;
      parts.emplace_back(cfg, p);
    }
    for (const TensorSpec& t0 : parts[0].tensors()) {
      std::vector<float> full(t0.fullSize());
      std::iota(full.begin(), full.end(), 0.0f);
      std::vector<float> rebuilt(full.size(), -1.0f);
      std::multiset<float> seen;
      for (int r = 0; r < tp; ++r) {
        const TensorSpec* t = parts[r].find(t0.name);
        ASSERT_NE(t, nullptr);
        std::vector<float> slice(t->size());
        sliceOf(*t, r, tp, full.data(), slice.data());
        placeSlice(*t, r, tp, slice.data(), rebuilt.data());
        if (t->split != Split::kNone) {
          seen.insert(slice.begin(), slice.end());
        }
      }
      EXPECT_EQ(rebuilt, full) << t0.name << " tp " << tp;
      if (t0.split != Split::kNone) {
        EXPECT_EQ(seen.size(), full.size()) << t0.name;  // disjoint slices
      }
    }
  }
}

TEST(ParamLayout, QkvSlicesKeepEachRanksHeadsOfQKAndV) {
  ModelConfig cfg = smallModel();  // 4 heads of 4
  ModelPart p = ModelPart::whole(cfg);
  p.tpSize = 2;
  p.tpRank = 1;
  ParamLayout l(cfg, p);
  const TensorSpec* qkv = l.find("h.0.attn.qkv.w");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->rows, 24);
  std::vector<float> full(qkv->fullSize());
  for (int r = 0; r < qkv->fullRows; ++r)
    for (int c = 0; c < qkv->fullCols; ++c) full[r * qkv->fullCols + c] = static_cast<float>(r);
  std::vector<float> slice(qkv->size());
  sliceOf(*qkv, 1, 2, full.data(), slice.data());
  // Rank 1 holds rows 8-15 of q (heads 2, 3), then the same rows of k (24-31) and of v (40-47).
  for (int r = 0; r < 24; ++r) EXPECT_EQ(slice[r * 16], (r / 8) * 16 + 8 + r % 8);
}

TEST(ParamLayout, InitialisationOfASliceEqualsTheSliceOfTheWhole) {
  ModelConfig cfg = smallModel();
  ParamLayout whole(cfg, ModelPart::whole(cfg));
  std::vector<float> all(whole.size());
  initParams(whole, 9, all.data());
  ModelPart p = ModelPart::whole(cfg);
  p.tpSize = 2;
  p.tpRank = 1;
  ParamLayout half(cfg, p);
  std::vector<float> mine(half.size());
  initParams(half, 9, mine.data());
  for (const TensorSpec& t : half.tensors()) {
    const TensorSpec* w = whole.find(t.name);
    std::vector<float> expect(t.size());
    sliceOf(t, 1, 2, all.data() + w->offset, expect.data());
    for (int64_t i = 0; i < t.size(); ++i) ASSERT_EQ(mine[t.offset + i], expect[i]) << t.name;
  }
}

TEST(BucketPlan, BucketsAreRunsOfWholeUnitsFromTheEndCutIntoEqualSlices) {
  ModelConfig cfg = smallModel();
  for (int dp : {1, 2, 3, 5}) {
    ParamLayout l(cfg, ModelPart::whole(cfg), 16 * dp);
    for (int64_t elems : {int64_t{0}, int64_t{1}, int64_t{5000}, int64_t{1} << 30}) {
      BucketPlan plan(l, dp, dp - 1, elems);
      int expectLast = static_cast<int>(l.units().size()) - 1;
      int64_t shard = 0;
      for (size_t b = 0; b < plan.buckets().size(); ++b) {
        const Bucket& k = plan.buckets()[b];
        EXPECT_EQ(k.lastUnit, expectLast);
        EXPECT_EQ(k.size, l.units()[k.lastUnit].offset + l.units()[k.lastUnit].size - k.offset);
        EXPECT_EQ(k.slice * dp, k.size);
        EXPECT_EQ(k.shardOffset, shard);
        if (elems <= 1) {
          EXPECT_EQ(k.firstUnit, k.lastUnit);
        }
        for (int u = k.firstUnit; u <= k.lastUnit; ++u) EXPECT_EQ(plan.bucketOfUnit(u), static_cast<int>(b));
        expectLast = k.firstUnit - 1;
        shard += k.slice;
      }
      EXPECT_EQ(expectLast, -1);
      EXPECT_EQ(plan.shardSize() * dp, l.size());
    }
  }
}

}  // namespace
}  // namespace chorus::train
