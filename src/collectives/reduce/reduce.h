// Host reduction kernels: element-wise operations on every Chorus type, one source per operation, compiled
// for several x86-64 ISAs (AVX-512, AVX2, SSE2, scalar) and chosen at run time from what the CPU has.
//
// Narrow types (float16, bfloat16, float8 e4m3/e5m2) are computed in float32 and rounded to nearest even at
// every step. Integer arithmetic wraps (two's complement), as NCCL's does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace chorus::reduce {

// Values equal chorusDataType_t.
enum class DType : int {
  kInt8 = 0,
  kUint8 = 1,
  kInt32 = 2,
  kUint32 = 3,
  kInt64 = 4,
  kUint64 = 5,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBfloat16 = 9,
  kFloat8e4m3 = 10,
  kFloat8e5m2 = 11,
};
constexpr int kNumDTypes = 12;
// Values equal chorusRedOp_t. kAvg reduces as kSum; the scaling is applied by the epilogue (ReduceParams).
enum class Op : int { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };
constexpr int kNumOps = 5;

enum class Isa : int { kScalar = 0, kSse2 = 1, kAvx2 = 2, kAvx512 = 3 };

// Bytes per element of each type, by DType value.
inline constexpr unsigned char kDTypeBytes[kNumDTypes] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
// Bytes per element of t; 0 for a value outside DType. Inline: every call sizes its operation with it, twice.
constexpr size_t dtypeSize(DType t) {
  const int i = static_cast<int>(t);
  return i >= 0 && i < kNumDTypes ? kDTypeBytes[i] : 0;
}
static_assert(dtypeSize(DType::kInt8) == 1 && dtypeSize(DType::kUint8) == 1 && dtypeSize(DType::kInt32) == 4 &&
                  dtypeSize(DType::kUint32) == 4 && dtypeSize(DType::kInt64) == 8 && dtypeSize(DType::kUint64) == 8 &&
                  dtypeSize(DType::kFloat16) == 2 && dtypeSize(DType::kFloat32) == 4 &&
                  dtypeSize(DType::kFloat64) == 8 && dtypeSize(DType::kBfloat16) == 2 &&
                  dtypeSize(DType::kFloat8e4m3) == 1 && dtypeSize(DType::kFloat8e5m2) == 1,
              "kDTypeBytes follows DType's values");
const char* dtypeName(DType t);  // "float32", "bfloat16", ...
bool isFloating(DType t);
const char* isaName(Isa isa);
// The best ISA this CPU supports (CPUID + XGETBV); CHORUS_ISA=scalar|sse2|avx2|avx512 lowers it.
Isa bestIsa();

// How the inputs and output of one reduction step are scaled, for kAvg:
//  - floating types pre-multiply each rank's own contribution by 1/nranks (NCCL's PreMulSum);
//  - integer types divide the final sum by nranks, truncating toward zero (NCCL's SumPostDiv).
struct ReduceParams {
  double premul = 1.0;  // applied to `local` before the reduction (1.0: none)
  int64_t postDiv = 1;  // the result is divided by this (1: none); integer types only
};

// dst[i] = op(local[i] * premul, remote[i]) / postDiv. dst may alias local or remote.
using ReduceFn = void (*)(void* dst, const void* local, const void* remote, size_t n, const ReduceParams& p);
// dst[i] = src[i] * premul / postDiv (a rank's contribution entering the pipeline, or the final result).
using ScaleFn = void (*)(void* dst, const void* src, size_t n, const ReduceParams& p);

struct Kernels {
  ReduceFn reduce;
  ScaleFn scale;
};

// The kernels for a type and op on the given ISA (default: bestIsa()). Never null.
const Kernels& kernels(DType t, Op op, Isa isa);
const Kernels& kernels(DType t, Op op);

// Below this, streaming stores' alignment prologue and fence cost more than the cache pollution they avoid.
constexpr size_t kMinStreamingBytes = 4096;

// Copies n bytes with streaming stores (n >= kMinStreamingBytes).
void copyStreamingBytes(void* dst, const void* src, size_t n);

// Copies n bytes; with nonTemporal, uses streaming stores (for outputs larger than the cache). Inline: the
// primitives copy every small message's payload twice through it.
inline void copyBytes(void* dst, const void* src, size_t n, bool nonTemporal = false) {
  if (nonTemporal && n >= kMinStreamingBytes) {
    copyStreamingBytes(dst, src, n);
  } else if (n != 0) {
    std::memcpy(dst, src, n);
  }
}

// Scalar conversions, exact, round to nearest even (used by tests and by the scalar kernels).
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t b);
uint16_t floatToBf16(float f);
float e4m3ToFloat(uint8_t v);
uint8_t floatToE4m3(float f);  // saturates to +-448 (NCCL's __nv_fp8 with __NV_SATFINITE), NaN stays NaN
float e5m2ToFloat(uint8_t v);
uint8_t floatToE5m2(float f);  // saturates to +-57344, NaN stays NaN

}  // namespace chorus::reduce
