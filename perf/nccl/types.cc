// Element types: sizes, names, and conversions between doubles and the narrow float formats (half, bfloat16,
// float8 e4m3 and e5m2) the checker needs to build inputs and expected values on the host.
#include <cmath>
#include <cstring>

#include "perf_test.h"

namespace chorus::perf {
namespace {

// A binary floating-point format with `expBits` exponent bits and `mantBits` stored mantissa bits. ieee: the
// top exponent encodes inf/NaN; otherwise (e4m3 "fn") only the all-ones pattern is NaN and the rest is finite.
struct MiniFormat {
  int expBits;
  int mantBits;
  bool ieee;
};

constexpr MiniFormat kHalf{5, 10, true};
constexpr MiniFormat kBf16{8, 7, true};
constexpr MiniFormat kE4m3{4, 3, false};
constexpr MiniFormat kE5m2{5, 2, true};

const MiniFormat* miniFormat(chorusDataType_t type) {
  switch (type) {
    case chorusFloat16: return &kHalf;
    case chorusBfloat16: return &kBf16;
    case chorusFloat8e4m3: return &kE4m3;
    case chorusFloat8e5m2: return &kE5m2;
    default: return nullptr;
  }
}

double decodeMini(uint32_t bits, const MiniFormat& f) {
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t mantMask = (1u << f.mantBits) - 1;
  const uint32_t expMax = (1u << f.expBits) - 1;
  const bool negative = (bits >> (f.expBits + f.mantBits)) & 1;
  const uint32_t e = (bits >> f.mantBits) & expMax;
  const uint32_t m = bits & mantMask;
  double v;
  if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - bias - f.mantBits);
  } else if (f.ieee && e == expMax) {
    v = m == 0 ? HUGE_VAL : NAN;
  } else if (!f.ieee && e == expMax && m == mantMask) {
    v = NAN;
  } else {
    v = std::ldexp(static_cast<double>(m | (1u << f.mantBits)), static_cast<int>(e) - bias - f.mantBits);
  }
  return negative ? -v : v;
}

// Rounds to nearest, ties to even (std::nearbyint in the default rounding mode). Overflow gives inf (ieee) or
// NaN (e4m3fn), as a saturating-free conversion would.
uint32_t encodeMini(double v, const MiniFormat& f) {
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t expMax = (1u << f.expBits) - 1;
  const uint32_t signBit = (std::signbit(v) ? 1u : 0u) << (f.expBits + f.mantBits);
  const uint32_t nanBits = (expMax << f.mantBits) | ((1u << f.mantBits) - 1);
  if (std::isnan(v)) return signBit | nanBits;
  v = std::fabs(v);
  if (v == 0) return signBit;
  int e2 = 0;
  std::frexp(v, &e2);
  int exp = e2 - 1;  // v = 1.xxx * 2^exp
  const int minExp = 1 - bias;
  if (exp < minExp) {  // subnormal: count units of 2^(minExp - mantBits); 2^mantBits carries into the exponent
    return signBit | static_cast<uint32_t>(std::nearbyint(std::ldexp(v, f.mantBits - minExp)));
  }
  double q = std::nearbyint(std::ldexp(v, f.mantBits - exp));
  if (q >= std::ldexp(1.0, f.mantBits + 1)) {
    q /= 2;
    ++exp;
  }
  const uint32_t expField = static_cast<uint32_t>(exp + bias);
  const uint32_t mant = static_cast<uint32_t>(q) - (1u << f.mantBits);
  if (f.ieee ? expField >= expMax : (expField > expMax || (expField == expMax && mant == (1u << f.mantBits) - 1))) {
    return f.ieee ? signBit | (expMax << f.mantBits) : signBit | nanBits;
  }
  return signBit | (expField << f.mantBits) | mant;
}

}  // namespace

size_t typeSize(chorusDataType_t type) {
  switch (type) {
    case chorusInt8:
    case chorusUint8:
    case chorusFloat8e4m3:
    case chorusFloat8e5m2: return 1;
    case chorusFloat16:
    case chorusBfloat16: return 2;
    case chorusInt32:
    case chorusUint32:
    case chorusFloat32: return 4;
    default: return 8;
  }
}

const char* typeName(chorusDataType_t type) {
  static const char* const kNames[] = {"int8", "uint8", "int32",  "uint32",   "int64",  "uint64",
                                       "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2"};
  int t = static_cast<int>(type);
  return t >= 0 && t < chorusNumTypes ? kNames[t] : "unknown";
}

const char* opName(chorusRedOp_t op) {
  static const char* const kNames[] = {"sum", "prod", "max", "min", "avg"};
  int o = static_cast<int>(op);
  return o >= 0 && o < chorusNumOps ? kNames[o] : "none";
}

bool isFloatType(chorusDataType_t type) {
  return type == chorusFloat16 || type == chorusFloat32 || type == chorusFloat64 || type == chorusBfloat16 ||
         type == chorusFloat8e4m3 || type == chorusFloat8e5m2;
}

double loadFloat(const void* elt, chorusDataType_t type) {
  if (type == chorusFloat32) {
    float f;
    std::memcpy(&f, elt, sizeof f);
    return f;
  }
  if (type == chorusFloat64) {
    double d;
    std::memcpy(&d, elt, sizeof d);
    return d;
  }
  uint32_t bits = 0;
  if (typeSize(type) == 2) {
    uint16_t b;
    std::memcpy(&b, elt, sizeof b);
    bits = b;
  } else {
    bits = *static_cast<const uint8_t*>(elt);
  }
  return decodeMini(bits, *miniFormat(type));
}

void storeFloat(void* elt, chorusDataType_t type, double v) {
  if (type == chorusFloat32) {
    float f = static_cast<float>(v);
    std::memcpy(elt, &f, sizeof f);
    return;
  }
  if (type == chorusFloat64) {
    std::memcpy(elt, &v, sizeof v);
    return;
  }
  uint32_t bits = encodeMini(v, *miniFormat(type));
  if (typeSize(type) == 2) {
    uint16_t b = static_cast<uint16_t>(bits);
    std::memcpy(elt, &b, sizeof b);
  } else {
    *static_cast<uint8_t*>(elt) = static_cast<uint8_t>(bits);
  }
}

int64_t loadInt(const void* elt, chorusDataType_t type) {
  switch (type) {
    case chorusInt8: return *static_cast<const int8_t*>(elt);
    case chorusUint8: return *static_cast<const uint8_t*>(elt);
    case chorusInt32: {
      int32_t v;
      std::memcpy(&v, elt, sizeof v);
      return v;
    }
    case chorusUint32: {
      uint32_t v;
      std::memcpy(&v, elt, sizeof v);
      return v;
    }
    default: {
      int64_t v;
      std::memcpy(&v, elt, sizeof v);
      return v;
    }
  }
}

void storeInt(void* elt, chorusDataType_t type, int64_t v) {
  switch (type) {
    case chorusInt8:
    case chorusUint8: *static_cast<uint8_t*>(elt) = static_cast<uint8_t>(v); break;
    case chorusInt32:
    case chorusUint32: {
      uint32_t u = static_cast<uint32_t>(v);
      std::memcpy(elt, &u, sizeof u);
      break;
    }
    default: std::memcpy(elt, &v, sizeof v); break;
  }
}

}  // namespace chorus::perf
