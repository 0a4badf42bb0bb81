// Inputs as a formula of (rank, index, seed), expected results computed on every rank, and the comparison.
//
// Every input is a small integer chosen so that each partial result of a reduction, in whatever order the
// library combines ranks, is exactly representable in the element type:
//   sum, avg  values in [0, b] with b = maxExact / nranks, so every partial sum stays <= maxExact; when there
//             are more ranks than maxExact, a value is 1 on at most maxExact ranks and 0 elsewhere.
//   prod      values in {1, 2}, with at most maxTwos ranks holding a 2 for any index: every partial product is
//             a power of two small enough for the type (2^6 for int8, 2^8 for float8 e4m3 whose maximum is 448).
//   min, max, and data movement: values in [-R, R] (signed and float types) or [0, R] (unsigned).
// Integer results are then exact (no wrap-around at all) and float results are exact except avg, whose final
// division may round: it is compared with a tolerance of 2 ulps (nranks/2 ulps past 4 ranks, for libraries that
// pre-multiply by 1/nranks as NCCL does).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "perf_test.h"

namespace chorus::perf {
namespace {

// Largest integer M such that every integer in [0, M] is exact in the type (capped, to keep values small).
int64_t maxExact(chorusDataType_t type) {
  switch (type) {
    case chorusInt8: return 127;
    case chorusUint8: return 255;
    case chorusFloat16: return 2048;
    case chorusBfloat16: return 256;
    case chorusFloat8e4m3: return 16;
    case chorusFloat8e5m2: return 8;
    default: return int64_t{1} << 20;
  }
}

// How many factors of two a product may hold and stay exact (and finite).
int maxTwos(chorusDataType_t type) {
  switch (type) {
    case chorusInt8: return 6;
    case chorusUint8: return 7;
    default: return 8;
  }
}

int mantissaBits(chorusDataType_t type) {
  switch (type) {
    case chorusFloat16: return 10;
    case chorusBfloat16: return 7;
    case chorusFloat8e4m3: return 3;
    case chorusFloat8e5m2: return 2;
    case chorusFloat32: return 23;
    default: return 52;
  }
}

int minExponent(chorusDataType_t type) {
  switch (type) {
    case chorusFloat16: return -14;
    case chorusBfloat16: return -126;
    case chorusFloat8e4m3: return -6;
    case chorusFloat8e5m2: return -14;
    case chorusFloat32: return -126;
    default: return -1022;
  }
}

bool isSigned(chorusDataType_t type) {
  return type != chorusUint8 && type != chorusUint32 && type != chorusUint64;
}

uint64_t mix(int rank, size_t index, uint64_t seed) {
  uint64_t x = static_cast<uint64_t>(index) * 0x9E3779B97F4A7C15ull ^
               static_cast<uint64_t>(rank) * 0xC2B2AE3D27D4EB4Full ^ (seed + 1) * 0x165667B19E3779F9ull;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  return x;
}

uint64_t ceilDiv(uint64_t a, uint64_t b) {
  return (a + b - 1) / b;
}

void storeValue(void* elt, chorusDataType_t type, int64_t v) {
  if (isFloatType(type)) {
    storeFloat(elt, type, static_cast<double>(v));
  } else {
    storeInt(elt, type, v);
  }
}

double ulp(double x, chorusDataType_t type) {
  int e = 0;
  std::frexp(x, &e);  // |x| = f * 2^e, f in [0.5, 1)
  int exp = std::max(e - 1, minExponent(type));
  return std::ldexp(1.0, exp - mantissaBits(type));
}

}  // namespace

int64_t inputValue(const Pattern& p, int rank, size_t index) {
  const uint64_t h = mix(rank, index, p.seed);
  const int64_t m = maxExact(p.type);
  switch (p.op) {
    case chorusSum:
    case chorusAvg: {
      const int64_t b = m / p.nranks;
      if (b >= 1) return static_cast<int64_t>(h % static_cast<uint64_t>(b + 1));
      const uint64_t period = ceilDiv(static_cast<uint64_t>(p.nranks), static_cast<uint64_t>(m));
      return (static_cast<uint64_t>(rank) + index + p.seed) % period == 0 ? 1 : 0;
    }
    case chorusProd: {
      const uint64_t period = std::max<uint64_t>(2, ceilDiv(static_cast<uint64_t>(p.nranks), maxTwos(p.type)));
      return (static_cast<uint64_t>(rank) + index + p.seed) % period == 0 ? 2 : 1;
    }
    default: {  // min, max, data movement
      if (!isSigned(p.type)) return static_cast<int64_t>(h % static_cast<uint64_t>(m + 1));
      return static_cast<int64_t>(h % static_cast<uint64_t>(2 * m + 1)) - m;
    }
  }
}

void fillInput(const Pattern& p, int rank, size_t offset, size_t count, void* dst) {
  const size_t size = typeSize(p.type);
  char* out = static_cast<char*>(dst);
  for (size_t j = 0; j < count; ++j) storeValue(out + j * size, p.type, inputValue(p, rank, offset + j));
}

void fillReduced(const Pattern& p, size_t offset, size_t count, void* dst) {
  const size_t size = typeSize(p.type);
  char* out = static_cast<char*>(dst);
  for (size_t j = 0; j < count; ++j) {
    int64_t acc = inputValue(p, 0, offset + j);
    for (int r = 1; r < p.nranks; ++r) {
      const int64_t v = inputValue(p, r, offset + j);
      switch (p.op) {
        case chorusProd: acc *= v; break;
        case chorusMax: acc = std::max(acc, v); break;
        case chorusMin: acc = std::min(acc, v); break;
        default: acc += v; break;
      }
    }
    if (p.op == chorusAvg) {
      if (isFloatType(p.type)) {
        storeFloat(out + j * size, p.type, static_cast<double>(acc) / p.nranks);
        continue;
      }
      acc /= p.nranks;
    }
    storeValue(out + j * size, p.type, acc);
  }
}

int64_t countWrong(const Pattern& p, const void* got, const void* expected, size_t count) {
  const size_t size = typeSize(p.type);
  if (std::memcmp(got, expected, count * size) == 0) return 0;
  const char* g = static_cast<const char*>(got);
  const char* e = static_cast<const char*>(expected);
  const bool tolerant = p.op == chorusAvg && isFloatType(p.type);
  const double ulps = std::max(2.0, p.nranks / 2.0);
  int64_t wrong = 0;
  for (size_t j = 0; j < count; ++j) {
    if (std::memcmp(g + j * size, e + j * size, size) == 0) continue;
    if (tolerant) {
      const double want = loadFloat(e + j * size, p.type);
      const double have = loadFloat(g + j * size, p.type);
      if (std::fabs(have - want) <= ulps * ulp(want, p.type)) continue;
    }
    ++wrong;
  }
  return wrong;
}

size_t perRankCount(size_t count, size_t eltSize, int nranks) {
  const size_t align = eltSize >= 16 ? 1 : 16 / eltSize;
  return (count / static_cast<size_t>(nranks)) / align * align;
}

void perRankBandwidth(size_t count, size_t eltSize, double sec, int nranks, double* algBw, double* busBw) {
  *algBw = sec > 0 ? static_cast<double>(count * eltSize * nranks) / 1e9 / sec : 0;
  *busBw = *algBw * (nranks - 1) / nranks;
}

void wholeBufferBandwidth(size_t count, size_t eltSize, double sec, int, double* algBw, double* busBw) {
  *algBw = sec > 0 ? static_cast<double>(count * eltSize) / 1e9 / sec : 0;
  *busBw = *algBw;
}

}  // namespace chorus::perf
