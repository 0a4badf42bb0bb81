// Inputs of the collective tests, and their expected results.
//
// Inputs are a formula of (rank, index, seed), as nccl-tests does, chosen so that every reduction is exact
// in any order for every type: integers wrap (any order gives the same result); floating sums use small
// integers whose partial sums stay exact even in float8; floating products use +-1/2, 1 and 2, whose
// products stay exact; max and min are exact. Floating avg is compared with a tolerance (pre-multiplying by
// 1/nranks rounds), integer avg exactly (sum divided by nranks, truncated toward zero).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "chorus/chorus.h"
#include "collectives/reduce/reduce.h"

namespace chorus::test {

size_t typeSize(chorusDataType_t t);
const char* typeName(chorusDataType_t t);
const char* opName(chorusRedOp_t op);

// The formulas below are inline: the sweeps evaluate them for every element they fill and check (tens of
// millions per case at 8 ranks), and as calls into another file, with long double arithmetic, they took most of
// the full sweep's time (perf record of CollThreadsFull/4: 54 % in inputValue and expectedReduce).
namespace detail {

inline bool isFloat(chorusDataType_t t) {
  return t == chorusFloat16 || t == chorusFloat32 || t == chorusFloat64 || t == chorusBfloat16 ||
         t == chorusFloat8e4m3 || t == chorusFloat8e5m2;
}

inline uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

// Wraps a mathematical integer to the type's range, as the library's integer arithmetic does (64-bit types:
// the values stay far from their range's ends).
inline int64_t wrapInt(chorusDataType_t t, int64_t v) {
  switch (t) {
    case chorusInt8: return static_cast<int8_t>(v);
    case chorusUint8: return static_cast<uint8_t>(v);
    case chorusInt32: return static_cast<int32_t>(v);
    case chorusUint32: return static_cast<uint32_t>(v);
    default: return v;
  }
}

// inputValue of an integer type, as an integer.
inline int64_t intInput(chorusDataType_t t, chorusRedOp_t op, uint64_t h) {
  // Any value (the arithmetic wraps, so every order agrees); 64-bit values small enough that sums and the
  // products of 0..3 stay exact when compared as doubles.
  if (op == chorusProd) return static_cast<int64_t>(h % 4);
  if (t == chorusInt64 || t == chorusUint64) return static_cast<int64_t>(h % 100000);
  return wrapInt(t, static_cast<int64_t>(h % 1000));
}

inline uint64_t inputHash(int rank, size_t i, uint64_t seed) {
  return mix(seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(rank) * 0x100000001b3ull + i);
}

}  // namespace detail

// The value (as a double) rank `rank` contributes at element `i`.
inline double inputValue(chorusDataType_t t, chorusRedOp_t op, int rank, size_t i, uint64_t seed) {
  const uint64_t h = detail::inputHash(rank, i, seed);
  if (!detail::isFloat(t)) return static_cast<double>(detail::intInput(t, op, h));
  if (op == chorusProd) {
    static constexpr double kFactors[] = {1, 1, 1, 2, 0.5, -1};
    return kFactors[h % 6];
  }
  // Sums of up to 8 ranks must stay exact even in float8 e5m2 (integers exact up to 8): values -1, 0, 1.
  if (t == chorusFloat8e4m3 || t == chorusFloat8e5m2) return static_cast<double>(h % 3) - 1;
  return static_cast<double>(h % 9) - 4;
}

// The reduction over ranks [0, nranks) of element i. Exact (integers in 64-bit arithmetic wrapped at every
// step; floating sums of small integers and products of powers of two in double) except floating avg, whose
// division rounds once (matches() allows for that).
inline double expectedReduce(chorusDataType_t t, chorusRedOp_t op, int nranks, size_t i, uint64_t seed) {
  if (!detail::isFloat(t)) {
    int64_t acc = detail::intInput(t, op, detail::inputHash(0, i, seed));
    for (int r = 1; r < nranks; ++r) {
      const int64_t v = detail::intInput(t, op, detail::inputHash(r, i, seed));
      switch (op) {
        case chorusProd: acc *= v; break;
        case chorusMax: acc = acc > v ? acc : v; break;
        case chorusMin: acc = acc < v ? acc : v; break;
        case chorusSum:
        case chorusAvg: acc += v; break;
        default: break;  // not a built-in reduction: rank 0's value
      }
      acc = detail::wrapInt(t, acc);
    }
    // Integer avg: the wrapped sum divided by nranks, truncated toward zero (as C++ integer division does).
    if (op == chorusAvg) acc = detail::wrapInt(t, acc / nranks);
    return static_cast<double>(acc);
  }
  double acc = inputValue(t, op, 0, i, seed);
  for (int r = 1; r < nranks; ++r) {
    const double v = inputValue(t, op, r, i, seed);
    switch (op) {
      case chorusProd: acc *= v; break;
      case chorusMax: acc = acc > v ? acc : v; break;
      case chorusMin: acc = acc < v ? acc : v; break;
      case chorusSum:
      case chorusAvg: acc += v; break;
      default: break;  // not a built-in reduction: rank 0's value
    }
  }
  return op == chorusAvg ? acc / nranks : acc;
}

// Calls fn(std::integral_constant<chorusDataType_t, T>{}) for the run-time type t (fn(t) for a value that is not a
// type): a loop in fn is compiled once per type, the formulas' branches on the type folded away (the constant
// converts to chorusDataType_t).
template <typename Fn>
void dispatchType(chorusDataType_t t, Fn&& fn) {
  switch (t) {
    case chorusInt8: fn(std::integral_constant<chorusDataType_t, chorusInt8>{}); break;
    case chorusUint8: fn(std::integral_constant<chorusDataType_t, chorusUint8>{}); break;
    case chorusInt32: fn(std::integral_constant<chorusDataType_t, chorusInt32>{}); break;
    case chorusUint32: fn(std::integral_constant<chorusDataType_t, chorusUint32>{}); break;
    case chorusInt64: fn(std::integral_constant<chorusDataType_t, chorusInt64>{}); break;
    case chorusUint64: fn(std::integral_constant<chorusDataType_t, chorusUint64>{}); break;
    case chorusFloat16: fn(std::integral_constant<chorusDataType_t, chorusFloat16>{}); break;
    case chorusFloat32: fn(std::integral_constant<chorusDataType_t, chorusFloat32>{}); break;
    case chorusFloat64: fn(std::integral_constant<chorusDataType_t, chorusFloat64>{}); break;
    case chorusBfloat16: fn(std::integral_constant<chorusDataType_t, chorusBfloat16>{}); break;
    case chorusFloat8e4m3: fn(std::integral_constant<chorusDataType_t, chorusFloat8e4m3>{}); break;
    case chorusFloat8e5m2: fn(std::integral_constant<chorusDataType_t, chorusFloat8e5m2>{}); break;
    default: fn(t); break;  // not a type: the formulas' own default cases
  }
}

// The same for a built-in reduction (fn(op) for any other).
template <typename Fn>
void dispatchOp(chorusRedOp_t op, Fn&& fn) {
  switch (op) {
    case chorusSum: fn(std::integral_constant<chorusRedOp_t, chorusSum>{}); break;
    case chorusProd: fn(std::integral_constant<chorusRedOp_t, chorusProd>{}); break;
    case chorusMax: fn(std::integral_constant<chorusRedOp_t, chorusMax>{}); break;
    case chorusMin: fn(std::integral_constant<chorusRedOp_t, chorusMin>{}); break;
    case chorusAvg: fn(std::integral_constant<chorusRedOp_t, chorusAvg>{}); break;
    default: fn(op); break;  // a user-defined op: the formulas treat it as a sum
  }
}

// Fills buf (count elements of type t) with rank's inputs.
void fillInput(void* buf, chorusDataType_t t, chorusRedOp_t op, int rank, size_t count, uint64_t seed);

// Writes v as element i of buf.
inline void storeValue(void* buf, chorusDataType_t t, size_t i, double v) {
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

// Reads element i of buf as a double.
inline double readValue(const void* buf, chorusDataType_t t, size_t i) {
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
    default: return __builtin_nan("");
  }
}

// True when `got` matches `want` for type t and op (exact, or within the avg tolerance).
inline bool matches(chorusDataType_t t, chorusRedOp_t op, int nranks, double got, double want) {
  if (op != chorusAvg || !detail::isFloat(t)) return got == want;
  // Pre-multiplying each contribution by 1/nranks rounds once per contribution and once per addition.
  const double eps = t == chorusFloat64      ? 0x1p-52
                     : t == chorusFloat32    ? 0x1p-23
                     : t == chorusFloat16    ? 0x1p-10
                     : t == chorusBfloat16   ? 0x1p-7
                     : t == chorusFloat8e4m3 ? 0x1p-3
                                             : 0x1p-2;
  const double scale = 4.0 + (want < 0 ? -want : want);  // inputs are at most 4 in magnitude
  const double diff = got > want ? got - want : want - got;
  return diff <= 2.0 * nranks * eps * scale;  // false for NaN
}

// Compares count elements of buf against expect(i); returns the number wrong and describes the first. `t` is
// a chorusDataType_t or a dispatchType constant (then the loop is compiled for that type).
template <typename Type, typename Expect>
size_t countWrongOf(const void* buf, Type t, chorusRedOp_t op, int nranks, size_t count, Expect expect,
                    std::string* first) {
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) {
    const double want = expect(i);
    const double got = readValue(buf, t, i);
    if (!matches(t, op, nranks, got, want)) {
      if (wrong == 0 && first != nullptr) {
        *first = "element " + std::to_string(i) + ": got " + std::to_string(got) + ", want " + std::to_string(want);
      }
      ++wrong;
    }
  }
  return wrong;
}

// countWrongOf, its loop compiled for each type.
template <typename Expect>
size_t countWrong(const void* buf, chorusDataType_t t, chorusRedOp_t op, int nranks, size_t count, Expect expect,
                  std::string* first) {
  size_t wrong = 0;
  dispatchType(t, [&](auto type) { wrong = countWrongOf(buf, type, op, nranks, count, expect, first); });
  return wrong;
}

}  // namespace chorus::test
