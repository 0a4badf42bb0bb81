// Every vector ISA this CPU supports against the scalar reference, bit for bit: every type x op, lengths around
// the vector widths, unaligned pointers, in place (dst == local, dst == remote), with and without avg's scaling.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "base/error.h"
#include "collectives/reduce/cpu_features.h"
#include "collectives/reduce/kernel_tables.h"
#include "collectives/reduce/reduce.h"

namespace chorus::reduce {
namespace {

struct Variant {
  const char* name;
  Isa isa;
  bool softwareBf16;  // AVX-512's software bfloat16 rounding, which dispatch skips on CPUs with AVX512_BF16
};
const Variant kVariants[] = {
    {"sse2", Isa::kSse2, false},
    {"avx2", Isa::kAvx2, false},
    {"avx512", Isa::kAvx512, false},
    {"avx512_swbf16", Isa::kAvx512, true},
};

const Kernels& variantKernels(const Variant& v, DType t, Op op) {
  if (v.softwareBf16) return avx512::kTable.kernels[static_cast<int>(t)][static_cast<int>(op)];
  return kernels(t, op, v.isa);
}

const size_t kLengths[] = {0, 1, 2, 3, 7, 15, 16, 17, 31, 63, 64, 65, 1000, 4097};
const size_t kByteOffsets[] = {0, 1, 3};

// Values of type t: half raw bit patterns (NaN, infinities, subnormals, extremes), half ordinary values (so sums
// and products mostly stay finite and round).
void fillValues(DType t, uint8_t* p, size_t n, std::mt19937_64& rng) {
  const size_t size = dtypeSize(t);
  std::uniform_real_distribution<double> nice(-8.0, 8.0);
  for (size_t i = 0; i < n; ++i) {
    uint64_t raw = rng();
    if (rng() & 1) {
      const double x = nice(rng);
      switch (t) {
        case DType::kFloat16: raw = floatToHalf(static_cast<float>(x)); break;
        case DType::kBfloat16: raw = floatToBf16(static_cast<float>(x)); break;
        case DType::kFloat8e4m3: raw = floatToE4m3(static_cast<float>(x)); break;
        case DType::kFloat8e5m2: raw = floatToE5m2(static_cast<float>(x)); break;
        case DType::kFloat32: {
          const float f = static_cast<float>(x);
          uint32_t b;
          std::memcpy(&b, &f, 4);
          raw = b;
          break;
        }
        case DType::kFloat64: std::memcpy(&raw, &x, 8); break;
        default: raw = static_cast<uint64_t>(static_cast<int64_t>(x * 1000)); break;
      }
    }
    std::memcpy(p + i * size, &raw, size);
  }
}

std::string firstDifference(DType t, const uint8_t* got, const uint8_t* want, size_t n) {
  const size_t size = dtypeSize(t);
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(got + i * size, want + i * size, size) != 0) {
      uint64_t g = 0, w = 0;
      std::memcpy(&g, got + i * size, size);
      std::memcpy(&w, want + i * size, size);
      std::ostringstream os;
      os << "element " << i << " of " << n << ": got 0x" << std::hex << g << ", scalar 0x" << w;
      return os.str();
    }
  }
  return "";
}

using Param = std::tuple<int, int, int>;  // variant, dtype, op

class ReduceKernelsTest : public ::testing::TestWithParam<Param> {};

TEST_P(ReduceKernelsTest, MatchesScalarBitForBit) {
  const Variant& variant = kVariants[std::get<0>(GetParam())];
  const DType t = static_cast<DType>(std::get<1>(GetParam()));
  const Op op = static_cast<Op>(std::get<2>(GetParam()));
  if (!isaSupported(variant.isa)) GTEST_SKIP() << "this CPU does not support " << isaName(variant.isa);
  const Kernels& k = variantKernels(variant, t, op);
  const Kernels& ref = kernels(t, op, Isa::kScalar);

  const size_t size = dtypeSize(t);
  std::mt19937_64 rng(std::get<0>(GetParam()) * 1000 + std::get<1>(GetParam()) * 10 + std::get<2>(GetParam()));
  const size_t maxBytes = 4097 * size + 64;
  std::vector<uint8_t> localBuf(maxBytes), remoteBuf(maxBytes), dstBuf(maxBytes), wantBuf(maxBytes);
  std::vector<ReduceParams> params(2);
  if (isFloating(t)) {
    params[1].premul = 1.0 / 3.0;
  } else {
    params[1].postDiv = 3;
  }

  for (const ReduceParams& p : params) {
    for (size_t n : kLengths) {
      for (size_t offset : kByteOffsets) {
        uint8_t* local = localBuf.data() + offset;
        uint8_t* remote = remoteBuf.data() + offset;
        uint8_t* dst = dstBuf.data() + offset;
        uint8_t* want = wantBuf.data() + offset;
        fillValues(t, local, n, rng);
        fillValues(t, remote, n, rng);
        const size_t bytes = n * size;
        SCOPED_TRACE(::testing::Message()
                     << "n=" << n << " offset=" << offset << " premul=" << p.premul << " postDiv=" << p.postDiv);

        ref.reduce(want, local, remote, n, p);
        std::memset(dst, 0xa5, bytes);
        k.reduce(dst, local, remote, n, p);
        ASSERT_EQ(firstDifference(t, dst, want, n), "") << "out of place";

        std::memcpy(dst, local, bytes);
        k.reduce(dst, dst, remote, n, p);
        ASSERT_EQ(firstDifference(t, dst, want, n), "") << "dst == local";

        std::memcpy(dst, remote, bytes);
        k.reduce(dst, local, dst, n, p);
        ASSERT_EQ(firstDifference(t, dst, want, n), "") << "dst == remote";

        ref.scale(want, local, n, p);
        k.scale(dst, local, n, p);
        ASSERT_EQ(firstDifference(t, dst, want, n), "") << "scale";
        std::memcpy(dst, local, bytes);
        k.scale(dst, dst, n, p);
        ASSERT_EQ(firstDifference(t, dst, want, n), "") << "scale in place";
      }
    }
  }
}

// Every narrow bit pattern against every other, through each op: covers all NaN, infinity and subnormal
// encodings on the vector paths (random data above may miss a few).
class ReduceNarrowKernelsTest : public ::testing::TestWithParam<Param> {};

TEST_P(ReduceNarrowKernelsTest, AllBitPatterns) {
  const Variant& variant = kVariants[std::get<0>(GetParam())];
  const DType t = static_cast<DType>(std::get<1>(GetParam()));
  const Op op = static_cast<Op>(std::get<2>(GetParam()));
  if (!isaSupported(variant.isa)) GTEST_SKIP() << "this CPU does not support " << isaName(variant.isa);
  const size_t size = dtypeSize(t);
  const Kernels& k = variantKernels(variant, t, op);
  const Kernels& ref = kernels(t, op, Isa::kScalar);
  const size_t n = size == 1 ? 256 * 256 : 65536;
  std::vector<uint8_t> local(n * size), remote(n * size), dst(n * size), want(n * size);
  std::mt19937_64 rng(42);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t a = size == 1 ? i % 256 : i;
    const uint64_t b = size == 1 ? i / 256 : rng();
    std::memcpy(&local[i * size], &a, size);
    std::memcpy(&remote[i * size], &b, size);
  }
  for (double premul : {1.0, 0.37}) {
    ReduceParams p;
    p.premul = premul;
    ref.reduce(want.data(), local.data(), remote.data(), n, p);
    k.reduce(dst.data(), local.data(), remote.data(), n, p);
    ASSERT_EQ(firstDifference(t, dst.data(), want.data(), n), "") << "premul " << premul;
    ref.scale(want.data(), local.data(), n, p);
    k.scale(dst.data(), local.data(), n, p);
    ASSERT_EQ(firstDifference(t, dst.data(), want.data(), n), "") << "scale, premul " << premul;
  }
}

std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  static const char* kOps[] = {"sum", "prod", "max", "min", "avg"};
  return std::string(kVariants[std::get<0>(info.param)].name) + "_" +
         dtypeName(static_cast<DType>(std::get<1>(info.param))) + "_" + kOps[std::get<2>(info.param)];
}

// Every (variant, type, op) where the variant has its own kernels: avx512_swbf16 differs from avx512 only in
// its bfloat16 row.
std::vector<Param> allParams(bool narrowOnly) {
  std::vector<Param> out;
  for (int v = 0; v < 4; ++v) {
    for (int t = 0; t < kNumDTypes; ++t) {
      const DType dt = static_cast<DType>(t);
      if (kVariants[v].softwareBf16 && dt != DType::kBfloat16) continue;
      if (narrowOnly && !(isFloating(dt) && dtypeSize(dt) <= 2)) continue;
      for (int op = 0; op < kNumOps; ++op) out.emplace_back(v, t, op);
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllIsasTypesOps, ReduceKernelsTest, ::testing::ValuesIn(allParams(false)), paramName);
INSTANTIATE_TEST_SUITE_P(NarrowTypes, ReduceNarrowKernelsTest, ::testing::ValuesIn(allParams(true)), paramName);

// The executors' per-call look-up (the best ISA, decided once) gives the same kernels as asking for that ISA, and
// still refuses a type or an op out of range.
TEST(ReduceKernels, TheBestIsaLookupMatchesTheExplicitOne) {
  for (int t = 0; t < kNumDTypes; ++t) {
    for (int op = 0; op < kNumOps; ++op) {
      const DType dt = static_cast<DType>(t);
      const Op o = static_cast<Op>(op);
      EXPECT_EQ(&kernels(dt, o), &kernels(dt, o, bestIsa())) << dtypeName(dt) << " op " << op;
    }
  }
  EXPECT_THROW(kernels(static_cast<DType>(kNumDTypes), Op::kSum), Error);
  EXPECT_THROW(kernels(DType::kFloat32, static_cast<Op>(kNumOps)), Error);
}

}  // namespace
}  // namespace chorus::reduce
