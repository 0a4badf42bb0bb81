// Scalar conversions between float32 and float16, bfloat16, fp8 e4m3/e5m2: exhaustive where the input space
// allows, against independent references (exact double arithmetic, brute-force nearest) and, where this CPU
// has them, against the F16C and AVX512_BF16 instructions the vector kernels use.
#include <gtest/gtest.h>
#include <immintrin.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "collectives/reduce/cpu_features.h"
#include "collectives/reduce/reduce.h"

namespace chorus::reduce {
namespace {

uint32_t bits(float f) {
  return std::bit_cast<uint32_t>(f);
}
float fromBits(uint32_t b) {
  return std::bit_cast<float>(b);
}

__attribute__((target("f16c"))) uint16_t hwFloatToHalf(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
__attribute__((target("f16c"))) float hwHalfToFloat(uint16_t h) {
  return _cvtsh_ss(h);
}

__attribute__((target("avx512f,avx512bf16"))) uint16_t hwFloatToBf16(float f) {
  const __m256bh r = _mm512_cvtneps_pbh(_mm512_set1_ps(f));
  uint16_t out[16];
  __builtin_memcpy(out, &r, sizeof out);
  return out[0];
}

bool hasF16c() {
  return cpuFeatures().avx2;
}  // the avx2 tier requires F16C

// ---- float16 -------------------------------------------------------------------------------------------------

// Reference decode: sign * 2^(e-15) * (1 + m/1024), subnormals m * 2^-24.
double halfValue(uint16_t h) {
  const int e = (h >> 10) & 0x1f;
  const int m = h & 0x3ff;
  const double s = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 0) return s * std::ldexp(m, -24);
  if (e == 31) return m ? std::numeric_limits<double>::quiet_NaN() : s * INFINITY;
  return s * std::ldexp(1024 + m, e - 25);
}

TEST(ReduceConvert, HalfDecodesAll65536Exactly) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = halfToFloat(static_cast<uint16_t>(h));
    const double want = halfValue(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      // NaN: payload kept, quiet bit set (as vcvtph2ps does).
      ASSERT_EQ(bits(f), ((h & 0x8000u) << 16) | 0x7fc00000u | ((h & 0x3ffu) << 13)) << std::hex << h;
    } else {
      ASSERT_EQ(static_cast<double>(f), want) << std::hex << h;
      ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << h;
    }
  }
}

TEST(ReduceConvert, HalfRoundTripsAll65536) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t back = floatToHalf(halfToFloat(static_cast<uint16_t>(h)));
    const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
    ASSERT_EQ(back, nan ? (h | 0x200u) : h) << std::hex << h;
  }
}

TEST(ReduceConvert, HalfRoundsHalfwayToEven) {
  for (uint32_t mag = 0; mag < 0x7c00; ++mag) {
    for (uint32_t sign : {0u, 0x8000u}) {
      const uint16_t lo = static_cast<uint16_t>(sign | mag);
      const uint16_t hi = static_cast<uint16_t>(lo + 1);
      const double hiValue = mag == 0x7bff ? (sign ? -65536.0 : 65536.0) : halfValue(hi);  // next "binade step"
      const float mid = static_cast<float>((halfValue(lo) + hiValue) / 2);                 // exact: 12 significant bits
      ASSERT_EQ(static_cast<double>(mid), (halfValue(lo) + hiValue) / 2);
      const uint16_t even = (mag & 1) ? hi : lo;
      ASSERT_EQ(floatToHalf(mid), even) << std::hex << lo;
      // One float ulp either side of the midpoint rounds to the nearer one.
      ASSERT_EQ(floatToHalf(std::nextafter(mid, 0.0f)), lo) << std::hex << lo;
      ASSERT_EQ(floatToHalf(std::nextafter(mid, sign ? -INFINITY : INFINITY)), hi) << std::hex << lo;
    }
  }
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.99f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(floatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(floatToHalf(-INFINITY), 0xfc00);
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000);  // halfway to the smallest subnormal: even
  EXPECT_EQ(floatToHalf(std::nextafter(0x1p-25f, 1.0f)), 0x0001);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
}

TEST(ReduceConvert, HalfMatchesF16cInstructions) {
  if (!hasF16c()) GTEST_SKIP() << "this CPU has no F16C";
  for (uint32_t h = 0; h < 65536; ++h) {
    ASSERT_EQ(bits(halfToFloat(static_cast<uint16_t>(h))), bits(hwHalfToFloat(static_cast<uint16_t>(h))))
        << std::hex << h;
  }
  // Every 61st float bit pattern (all exponents, signs, NaN payloads), plus the neighbourhood of each half.
  for (uint64_t b = 0; b < (1ull << 32); b += 61) {
    const float f = fromBits(static_cast<uint32_t>(b));
    ASSERT_EQ(floatToHalf(f), hwFloatToHalf(f)) << std::hex << b;
  }
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint32_t c = bits(halfToFloat(static_cast<uint16_t>(h)));
    for (uint32_t d : {0x1000u, 0x0fffu, 0x1001u, 0x2000u}) {
      for (uint32_t b : {c + d, c - d})
        ASSERT_EQ(floatToHalf(fromBits(b)), hwFloatToHalf(fromBits(b))) << std::hex << b;
    }
  }
}

// ---- bfloat16 ------------------------------------------------------------------------------------------------

TEST(ReduceConvert, Bf16RoundTripsAll65536) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = bf16ToFloat(static_cast<uint16_t>(h));
    ASSERT_EQ(bits(f), h << 16);
    const bool nan = (h & 0x7f80) == 0x7f80 && (h & 0x7f) != 0;
    ASSERT_EQ(floatToBf16(f), nan ? (h | 0x40u) : h) << std::hex << h;
  }
}

TEST(ReduceConvert, Bf16RoundsHalfwayToEven) {
  for (uint32_t h = 0; h < 65536; ++h) {
    if ((h & 0x7fff) >= 0x7f80) continue;      // the last finite value rounds up to infinity; below
    const uint32_t mid = (h << 16) | 0x8000u;  // exactly halfway between h and h + 1
    const uint16_t even = static_cast<uint16_t>((h & 1) ? h + 1 : h);
    ASSERT_EQ(floatToBf16(fromBits(mid)), even) << std::hex << h;
    ASSERT_EQ(floatToBf16(fromBits(mid - 1)), h) << std::hex << h;
    ASSERT_EQ(floatToBf16(fromBits(mid + 1)), h + 1) << std::hex << h;
  }
  EXPECT_EQ(floatToBf16(fromBits(0x7f7f8000u)), 0x7f80);  // halfway above the largest finite: infinity
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(floatToBf16(fromBits(0x00008001u)), 0x0001);  // subnormals round exactly, not flushed
  EXPECT_EQ(floatToBf16(fromBits(0x7f800001u)), 0x7fc0);  // signalling NaN: quieted
}

TEST(ReduceConvert, Bf16MatchesAvx512Bf16ExceptSubnormals) {
  if (!cpuFeatures().avx512Bf16) GTEST_SKIP() << "this CPU has no AVX512_BF16";
  for (uint64_t b = 0; b < (1ull << 32); b += 61) {
    const uint32_t u = static_cast<uint32_t>(b);
    if ((u & 0x7f800000u) == 0) continue;  // vcvtneps2bf16 flushes subnormals; the kernels route those around it
    ASSERT_EQ(floatToBf16(fromBits(u)), hwFloatToBf16(fromBits(u))) << std::hex << u;
  }
}

// ---- fp8 -----------------------------------------------------------------------------------------------------

struct Fp8Format {
  int mantBits;
  int bias;
  bool hasInf;
  double max;
  uint8_t maxCode;
  uint8_t (*encode)(float);
  float (*decode)(uint8_t);
};
const Fp8Format kE4m3{3, 7, false, 448.0, 0x7e, &floatToE4m3, &e4m3ToFloat};
const Fp8Format kE5m2{2, 15, true, 57344.0, 0x7b, &floatToE5m2, &e5m2ToFloat};

double fp8Value(const Fp8Format& f, uint8_t v) {
  const int e = (v & 0x7f) >> f.mantBits;
  const int m = v & ((1 << f.mantBits) - 1);
  const int maxE = (1 << (7 - f.mantBits)) - 1;
  const double s = (v & 0x80) ? -1.0 : 1.0;
  if (f.hasInf && e == maxE) return m ? NAN : s * INFINITY;
  if (!f.hasInf && e == maxE && m == (1 << f.mantBits) - 1) return NAN;
  if (e == 0) return s * std::ldexp(m, 1 - f.bias - f.mantBits);
  return s * std::ldexp((1 << f.mantBits) + m, e - f.bias - f.mantBits);
}

// Brute force: the finite code nearest to x, ties to the even code, saturating beyond the largest finite value.
uint8_t fp8Nearest(const Fp8Format& f, float x) {
  const double ax = std::fabs(static_cast<double>(x));
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  if (ax >= f.max) return sign | f.maxCode;
  uint8_t best = 0;
  double bestErr = INFINITY;
  for (int c = 0; c <= f.maxCode; ++c) {
    const double err = std::fabs(fp8Value(f, static_cast<uint8_t>(c)) - ax);
    if (err < bestErr || (err == bestErr && (c & 1) == 0)) {
      best = static_cast<uint8_t>(c);
      bestErr = err;
    }
  }
  return sign | best;
}

void checkFp8(const Fp8Format& f) {
  for (int v = 0; v < 256; ++v) {
    const double want = fp8Value(f, static_cast<uint8_t>(v));
    const float got = f.decode(static_cast<uint8_t>(v));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << v;
      ASSERT_TRUE(std::isnan(fp8Value(f, f.encode(got)))) << v;  // NaN stays NaN
      ASSERT_EQ(f.encode(got) & 0x80, v & 0x80) << v;
      continue;
    }
    ASSERT_EQ(static_cast<double>(got), want) << v;
    ASSERT_EQ(std::signbit(got), (v & 0x80) != 0) << v;
    const uint8_t back = f.encode(got);
    if (std::isinf(want)) {
      ASSERT_EQ(back, (v & 0x80) | f.maxCode) << v;  // satfinite: infinity saturates
    } else {
      ASSERT_EQ(back, v) << v;
    }
  }
  // Midpoints between neighbours, one float ulp either side, and random floats, against brute force.
  for (int c = 0; c < f.maxCode; ++c) {
    for (uint8_t sign : {0, 0x80}) {
      const float mid =
          static_cast<float>((fp8Value(f, static_cast<uint8_t>(c)) + fp8Value(f, static_cast<uint8_t>(c + 1))) / 2) *
          (sign ? -1.0f : 1.0f);
      for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, sign ? -INFINITY : INFINITY)}) {
        ASSERT_EQ(f.encode(x), fp8Nearest(f, x)) << x;
      }
    }
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> logMag(-24, 18);
  for (int i = 0; i < 200000; ++i) {
    const float x = static_cast<float>(std::exp2(logMag(rng))) * ((rng() & 1) ? -1.0f : 1.0f);
    ASSERT_EQ(f.encode(x), fp8Nearest(f, x)) << x;
  }
}

TEST(ReduceConvert, E4m3All256AndRounding) {
  checkFp8(kE4m3);
  EXPECT_EQ(floatToE4m3(448.0f), 0x7e);
  EXPECT_EQ(floatToE4m3(464.0f), 0x7e);
  EXPECT_EQ(floatToE4m3(1e30f), 0x7e);
  EXPECT_EQ(floatToE4m3(INFINITY), 0x7e);
  EXPECT_EQ(floatToE4m3(-INFINITY), 0xfe);
  EXPECT_EQ(floatToE4m3(NAN), 0x7f);
  EXPECT_EQ(floatToE4m3(-NAN), 0xff);
  EXPECT_EQ(floatToE4m3(0x1p-10f), 0x00);   // halfway to the smallest subnormal 2^-9: even
  EXPECT_EQ(floatToE4m3(0x1.8p-9f), 0x02);  // halfway between 1 and 2 subnormal steps: even
}

TEST(ReduceConvert, E5m2All256AndRounding) {
  checkFp8(kE5m2);
  EXPECT_EQ(floatToE5m2(57344.0f), 0x7b);
  EXPECT_EQ(floatToE5m2(61440.0f), 0x7b);
  EXPECT_EQ(floatToE5m2(INFINITY), 0x7b);
  EXPECT_EQ(floatToE5m2(-INFINITY), 0xfb);
  EXPECT_EQ(floatToE5m2(NAN), 0x7e);
  EXPECT_TRUE(std::isinf(e5m2ToFloat(0x7c)));
  EXPECT_EQ(floatToE5m2(0x1p-17f), 0x00);
}

}  // namespace
}  // namespace chorus::reduce
