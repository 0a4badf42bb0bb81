#include "common/test_data.h"

#include <cmath>
#include <cstring>

#include "collectives/reduce/reduce.h"

namespace chorus::test {

namespace {

bool isFloat(chorusDataType_t t) {
  return t == chorusFloat16 || t == chorusFloat32 || t == chorusFloat64 || t == chorusBfloat16 ||
         t == chorusFloat8e4m3 || t == chorusFloat8e5m2;
}

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

// Wraps a mathematical integer to the type's range, as the library's integer arithmetic does.
double wrapInt(chorusDataType_t t, long double v) {
  switch (t) {
    case chorusInt8: return static_cast<int8_t>(static_cast<int64_t>(v));
    case chorusUint8: return static_cast<uint8_t>(static_cast<int64_t>(v));
    case chorusInt32: return static_cast<int32_t>(static_cast<int64_t>(v));
    case chorusUint32: return static_cast<uint32_t>(static_cast<int64_t>(v));
    default: return static_cast<double>(v);
  }
}

}  // namespace

size_t typeSize(chorusDataType_t t) {
  return reduce::dtypeSize(static_cast<reduce::DType>(t));
}
const char* typeName(chorusDataType_t t) {
  return reduce::dtypeName(static_cast<reduce::DType>(t));
}

const char* opName(chorusRedOp_t op) {
  static const char* names[] = {"sum", "prod", "max", "min", "avg"};
  return names[op];
}

double inputValue(chorusDataType_t t, chorusRedOp_t op, int rank, size_t i, uint64_t seed) {
  uint64_t h = mix(seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(rank) * 0x100000001b3ull + i);
  if (!isFloat(t)) {
    // Integers: any value (the arithmetic wraps, so every order agrees); keep 64-bit values small enough
    // that the test's own double arithmetic stays exact.
    if (op == chorusProd) return static_cast<double>(h % 4);  // 0..3: products of 8 stay exact in double
    if (t == chorusInt64 || t == chorusUint64) return static_cast<double>(h % 100000);
    return wrapInt(t, static_cast<long double>(h % 1000));
  }
  if (op == chorusProd) {
    static const double kFactors[] = {1, 1, 1, 2, 0.5, -1};
    return kFactors[h % 6];
  }
  // Sums of up to 8 ranks must stay exact even in float8 e5m2 (integers exact up to 8): values -1, 0, 1.
  if (t == chorusFloat8e4m3 || t == chorusFloat8e5m2) return static_cast<double>(h % 3) - 1;
  return static_cast<double>(h % 9) - 4;
}

void fillInput(void* buf, chorusDataType_t t, chorusRedOp_t op, int rank, size_t count, uint64_t seed) {
  for (size_t i = 0; i < count; ++i) {
    double v = inputValue(t, op, rank, i, seed);
    switch (t) {
      case chorusInt8: static_cast<int8_t*>(buf)[i] = static_cast<int8_t>(v); break;
      case chorusUint8: static_cast<uint8_t*>(buf)[i] = static_cast<uint8_t>(static_cast<int>(v)); break;
      case chorusInt32: static_cast<int32_t*>(buf)[i] = static_cast<int32_t>(v); break;
      case chorusUint32: static_cast<uint32_t*>(buf)[i] = static_cast<uint32_t>(static_cast<int64_t>(v)); break;
      case chorusInt64: static_cast<int64_t*>(buf)[i] = static_cast<int64_t>(v); break;
      case chorusUint64: static_cast<uint64_t*>(buf)[i] = static_cast<uint64_t>(static_cast<int64_t>(v)); break;
      case chorusFloat16: static_cast<uint16_t*>(buf)[i] = reduce::floatToHalf(static_cast<float>(v)); break;
      case chorusFloat32: static_cast<float*>(buf)[i] = static_cast<float>(v); break;
      case chorusFloat64: static_cast<double*>(buf)[i] = v; break;
      case chorusBfloat16: static_cast<uint16_t*>(buf)[i] = reduce::floatToBf16(static_cast<float>(v)); break;
      case chorusFloat8e4m3: static_cast<uint8_t*>(buf)[i] = reduce::floatToE4m3(static_cast<float>(v)); break;
      case chorusFloat8e5m2: static_cast<uint8_t*>(buf)[i] = reduce::floatToE5m2(static_cast<float>(v)); break;
      default: break;
    }
  }
}

double readValue(const void* buf, chorusDataType_t t, size_t i) {
  switch (t) {
    case chorusInt8: return static_cast<const int8_t*>(buf)[i];
    case chorusUint8: return static_cast<const uint8_t*>(buf)[i];
    case chorusInt32: return static_cast<const int32_t*>(buf)[i];
    case chorusUint32: return static_cast<const uint32_t*>(buf)[i];
    case chorusInt64: return static_cast<double>(static_cast<const int64_t*>(buf)[i]);
    case chorusUint64: return static_cast<double>(static_cast<const uint64_t*>(buf)[i]);
    case chorusFloat16: return reduce::halfToFloat(static_cast<const uint16_t*>(buf)[i]);
    case chorusFloat32: return static_cast<const float*>(buf)[i];
    case chorusFloat64: return static_cast<const double*>(buf)[i];
    case chorusBfloat16: return reduce::bf16ToFloat(static_cast<const uint16_t*>(buf)[i]);
    case chorusFloat8e4m3: return reduce::e4m3ToFloat(static_cast<const uint8_t*>(buf)[i]);
    case chorusFloat8e5m2: return reduce::e5m2ToFloat(static_cast<const uint8_t*>(buf)[i]);
    default: return NAN;
  }
}

double expectedReduce(chorusDataType_t t, chorusRedOp_t op, int nranks, size_t i, uint64_t seed) {
  long double acc = inputValue(t, op, 0, i, seed);
  for (int r = 1; r < nranks; ++r) {
    double v = inputValue(t, op, r, i, seed);
    switch (op) {
      case chorusSum:
      case chorusAvg: acc += v; break;
      case chorusProd: acc *= v; break;
      case chorusMax: acc = std::max<long double>(acc, v); break;
      case chorusMin: acc = std::min<long double>(acc, v); break;
      default: break;
    }
    if (!isFloat(t)) acc = wrapInt(t, acc);
  }
  if (op == chorusAvg) {
    if (isFloat(t)) return static_cast<double>(acc / nranks);
    // Integer avg: the wrapped sum divided by nranks, truncated toward zero.
    return wrapInt(t, std::trunc(acc / nranks));
  }
  return static_cast<double>(acc);
}

bool matches(chorusDataType_t t, chorusRedOp_t op, int nranks, double got, double want) {
  if (op != chorusAvg || !isFloat(t)) return got == want;
  // Pre-multiplying each contribution by 1/nranks rounds once per contribution and once per addition.
  double eps = t == chorusFloat64      ? 0x1p-52
               : t == chorusFloat32    ? 0x1p-23
               : t == chorusFloat16    ? 0x1p-10
               : t == chorusBfloat16   ? 0x1p-7
               : t == chorusFloat8e4m3 ? 0x1p-3
                                       : 0x1p-2;
  double scale = 4.0 + std::fabs(want);  // inputs are at most 4 in magnitude
  return std::fabs(got - want) <= 2.0 * nranks * eps * scale;
}

}  // namespace chorus::test
