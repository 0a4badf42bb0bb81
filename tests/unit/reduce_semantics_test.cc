// What the kernels compute, against hand-written expectations and the public scalar conversions: wrapping
// integers, avg's premul and postDiv, narrow types rounding at every step, NaN handling of max/min, fp8
// saturation; plus copyBytes and the ISA choice. Run on the scalar reference and on the best ISA.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "base/error.h"
#include "collectives/reduce/cpu_features.h"
#include "collectives/reduce/reduce.h"

namespace chorus::reduce {
namespace {

class ReduceSemanticsTest : public ::testing::TestWithParam<Isa> {
 protected:
  template <typename T>
  std::vector<T> reduce(DType t, Op op, const std::vector<T>& a, const std::vector<T>& b, ReduceParams p = {}) {
    std::vector<T> out(a.size());
    kernels(t, op, GetParam()).reduce(out.data(), a.data(), b.data(), a.size(), p);
    return out;
  }
};

TEST_P(ReduceSemanticsTest, IntegersWrap) {
  EXPECT_EQ(reduce<int8_t>(DType::kInt8, Op::kSum, {127, -128}, {1, -1}), (std::vector<int8_t>{-128, 127}));
  EXPECT_EQ(reduce<uint8_t>(DType::kUint8, Op::kProd, {200, 16}, {2, 16}), (std::vector<uint8_t>{144, 0}));
  const int32_t kMax32 = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(reduce<int32_t>(DType::kInt32, Op::kSum, {kMax32}, {1}), (std::vector<int32_t>{INT32_MIN}));
  EXPECT_EQ(reduce<int64_t>(DType::kInt64, Op::kProd, {INT64_MIN}, {-1}), (std::vector<int64_t>{INT64_MIN}));
  EXPECT_EQ(reduce<uint64_t>(DType::kUint64, Op::kMax, {~0ull, 5}, {1, 6}), (std::vector<uint64_t>{~0ull, 6}));
  EXPECT_EQ(reduce<int64_t>(DType::kInt64, Op::kMin, {-5, 5}, {3, 3}), (std::vector<int64_t>{-5, 3}));
}

TEST_P(ReduceSemanticsTest, IntegerAvgDividesTruncatingTowardZero) {
  ReduceParams p;
  p.postDiv = 2;
  EXPECT_EQ(reduce<int32_t>(DType::kInt32, Op::kAvg, {-7, 7, -8, 9}, {0, 0, 0, 0}, p),
            (std::vector<int32_t>{-3, 3, -4, 4}));
  EXPECT_EQ(reduce<int8_t>(DType::kInt8, Op::kAvg, {-4, 100}, {-3, 27}, p), (std::vector<int8_t>{-3, 63}));
  // uint64 above 2^63 divides as unsigned; a divisor above the type's range still divides correctly.
  EXPECT_EQ(reduce<uint64_t>(DType::kUint64, Op::kAvg, {~0ull - 1}, {0}, p), (std::vector<uint64_t>{~0ull >> 1}));
  p.postDiv = 300;
  EXPECT_EQ(reduce<int8_t>(DType::kInt8, Op::kAvg, {127}, {0}, p), (std::vector<int8_t>{0}));
  EXPECT_EQ(reduce<uint8_t>(DType::kUint8, Op::kAvg, {255}, {0}, p), (std::vector<uint8_t>{0}));
  // Floating types ignore postDiv; integer types ignore premul.
  ReduceParams q;
  q.premul = 0.5;
  EXPECT_EQ(reduce<int32_t>(DType::kInt32, Op::kAvg, {10}, {4}, q), (std::vector<int32_t>{14}));
  q = ReduceParams{};
  q.postDiv = 2;
  EXPECT_EQ(reduce<float>(DType::kFloat32, Op::kAvg, {10}, {4}, q), (std::vector<float>{14}));
  // scale: the final division of an integer avg, and the premul of a float one.
  std::vector<int32_t> v = {-7, 7};
  kernels(DType::kInt32, Op::kAvg, GetParam()).scale(v.data(), v.data(), 2, p = ReduceParams{1.0, 2});
  EXPECT_EQ(v, (std::vector<int32_t>{-3, 3}));
}

TEST_P(ReduceSemanticsTest, FloatPremulMultipliesLocalOnly) {
  ReduceParams p;
  p.premul = 0.25;
  EXPECT_EQ(reduce<float>(DType::kFloat32, Op::kAvg, {8, -4}, {1, 1}, p), (std::vector<float>{3, 0}));
  EXPECT_EQ(reduce<double>(DType::kFloat64, Op::kAvg, {8, -4}, {1, 1}, p), (std::vector<double>{3, 0}));
  // float32 premul is the float32 product, rounded before the add (no FMA).
  p.premul = 1.0 / 3.0;
  const float third = static_cast<float>(1.0 / 3.0);
  const float x = 0.7f, y = 1e-8f;
  EXPECT_EQ(reduce<float>(DType::kFloat32, Op::kAvg, {x}, {y}, p)[0], x * third + y);
}

// Narrow types: widen exactly, compute in float32, round to the type after the premul and after the op.
TEST_P(ReduceSemanticsTest, NarrowTypesRoundAtEveryStep) {
  struct Narrow {
    DType t;
    uint16_t (*encode)(float);
    float (*decode)(uint16_t);
  };
  const Narrow kNarrow[] = {
      {DType::kFloat16, &floatToHalf, &halfToFloat},
      {DType::kBfloat16, &floatToBf16, &bf16ToFloat},
      {DType::kFloat8e4m3, [](float f) -> uint16_t { return floatToE4m3(f); },
       [](uint16_t v) { return e4m3ToFloat(static_cast<uint8_t>(v)); }},
      {DType::kFloat8e5m2, [](float f) -> uint16_t { return floatToE5m2(f); },
       [](uint16_t v) { return e5m2ToFloat(static_cast<uint8_t>(v)); }},
  };
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-300.0f, 300.0f);
  for (const Narrow& nt : kNarrow) {
    const size_t size = dtypeSize(nt.t);
    const size_t n = 333;
    std::vector<uint16_t> a(n), b(n);
    for (size_t i = 0; i < n; ++i) {
      a[i] = nt.encode(dist(rng));
      b[i] = nt.encode(dist(rng));
    }
    std::vector<uint8_t> la(n * size), lb(n * size), out(n * size);
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(&la[i * size], &a[i], size);
      std::memcpy(&lb[i * size], &b[i], size);
    }
    for (Op op : {Op::kSum, Op::kProd, Op::kMax, Op::kMin, Op::kAvg}) {
      ReduceParams p;
      p.premul = op == Op::kAvg ? 1.0 / 3.0 : 1.0;
      kernels(nt.t, op, GetParam()).reduce(out.data(), la.data(), lb.data(), n, p);
      for (size_t i = 0; i < n; ++i) {
        float x = nt.decode(a[i]);
        const float y = nt.decode(b[i]);
        if (p.premul != 1.0) x = nt.decode(nt.encode(x * static_cast<float>(p.premul)));
        float r = 0;
        switch (op) {
          case Op::kSum:
          case Op::kAvg: r = x + y; break;
          case Op::kProd: r = x * y; break;
          case Op::kMax: r = x > y ? x : y; break;
          case Op::kMin: r = x < y ? x : y; break;
        }
        uint16_t got = 0;
        std::memcpy(&got, &out[i * size], size);
        ASSERT_EQ(got, nt.encode(r)) << dtypeName(nt.t) << " op " << static_cast<int>(op) << " element " << i;
      }
    }
  }
}

// fmaxf/fminf semantics: a NaN operand is ignored unless both are NaN; equal values (+0, -0) give remote.
TEST_P(ReduceSemanticsTest, MaxMinIgnoreNaNLikeFmax) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto mx = reduce<float>(DType::kFloat32, Op::kMax, {nan, 1, 0.0f, -0.0f, 2, nan}, {1, nan, -0.0f, 0.0f, 3, nan});
  EXPECT_EQ(mx[0], 1);
  EXPECT_EQ(mx[1], 1);
  EXPECT_TRUE(std::signbit(mx[2]));
  EXPECT_FALSE(std::signbit(mx[3]));
  EXPECT_EQ(mx[4], 3);
  EXPECT_TRUE(std::isnan(mx[5]));
  auto mn = reduce<double>(DType::kFloat64, Op::kMin, {NAN, 1, 2}, {1, NAN, -3});
  EXPECT_EQ(mn, (std::vector<double>{1, 1, -3}));
  // float16: the same rule after widening.
  auto h = reduce<uint16_t>(DType::kFloat16, Op::kMax, {0x7e00, 0x3c00, 0x7e00}, {0x3c00, 0x7e00, 0xfe00});
  EXPECT_EQ(h, (std::vector<uint16_t>{0x3c00, 0x3c00, 0x7e00}));
}

TEST_P(ReduceSemanticsTest, Fp8SaturatesAndKeepsNaN) {
  // 448 + 448 saturates; 256 * 2 too; NaN + 1 stays NaN.
  EXPECT_EQ(reduce<uint8_t>(DType::kFloat8e4m3, Op::kSum, {0x7e, 0xfe, 0x7f}, {0x7e, 0xfe, 0x38}),
            (std::vector<uint8_t>{0x7e, 0xfe, 0x7f}));
  EXPECT_EQ(reduce<uint8_t>(DType::kFloat8e5m2, Op::kSum, {0x7b, 0x7c, 0x7e}, {0x7b, 0x3c, 0x3c}),
            (std::vector<uint8_t>{0x7b, 0x7b, 0x7e}));
}

TEST_P(ReduceSemanticsTest, CopyBytes) {
  // dst holds the largest offset (33) plus the largest n plus the byte checked after it.
  std::vector<uint8_t> src(300000), dst(300100);
  std::mt19937 rng(1);
  for (auto& b : src) b = static_cast<uint8_t>(rng());
  for (bool nt : {false, true}) {
    for (size_t n : {0, 1, 63, 4095, 4096, 4097, 100003, 299990}) {
      for (size_t off : {0, 1, 7, 33}) {
        std::fill(dst.begin(), dst.end(), 0);
        copyBytes(dst.data() + off, src.data() + (off * 3) % 11, n, nt);
        ASSERT_EQ(std::memcmp(dst.data() + off, src.data() + (off * 3) % 11, n), 0) << n << " " << off << " " << nt;
        ASSERT_EQ(dst[off + n], 0);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ScalarAndBest, ReduceSemanticsTest, ::testing::Values(Isa::kScalar, bestIsa()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(isaName(info.param)) + (info.index ? "_best" : "");
                         });

TEST(ReduceIsa, ChooseIsaOnlyLowers) {
  EXPECT_EQ(chooseIsa(Isa::kAvx512, nullptr), Isa::kAvx512);
  EXPECT_EQ(chooseIsa(Isa::kAvx512, ""), Isa::kAvx512);
  EXPECT_EQ(chooseIsa(Isa::kAvx512, "sse2"), Isa::kSse2);
  EXPECT_EQ(chooseIsa(Isa::kAvx512, "scalar"), Isa::kScalar);
  EXPECT_EQ(chooseIsa(Isa::kAvx2, "avx512"), Isa::kAvx2);
  EXPECT_EQ(chooseIsa(Isa::kAvx2, "AVX9"), Isa::kAvx2);
  EXPECT_TRUE(isaSupported(bestIsa()));
  EXPECT_TRUE(isaSupported(Isa::kScalar));
  EXPECT_TRUE(isaSupported(Isa::kSse2));
}

TEST(ReduceIsa, RejectsInvalidArguments) {
  EXPECT_THROW(kernels(static_cast<DType>(12), Op::kSum), Error);
  EXPECT_THROW(kernels(DType::kInt8, static_cast<Op>(-1)), Error);
  if (!isaSupported(Isa::kAvx512)) {
    EXPECT_THROW(kernels(DType::kInt8, Op::kSum, Isa::kAvx512), Error);
  }
}

TEST(ReduceIsa, DTypeInfo) {
  EXPECT_EQ(dtypeSize(DType::kBfloat16), 2u);
  EXPECT_EQ(dtypeSize(DType::kFloat8e5m2), 1u);
  EXPECT_EQ(dtypeSize(DType::kUint64), 8u);
  EXPECT_STREQ(dtypeName(DType::kFloat8e4m3), "float8e4m3");
  EXPECT_TRUE(isFloating(DType::kBfloat16));
  EXPECT_FALSE(isFloating(DType::kUint32));
}

}  // namespace
}  // namespace chorus::reduce
