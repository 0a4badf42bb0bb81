// Elementwise math the compiler can vectorise: exp for float by range reduction and a polynomial
// (within 2 ulp of the exact value over the range the layers use), the exact libm functions for double (the
// gradient check). Softmax and GELU call it on every element of every step, where a libm call per element
// would cost more than the GEMMs around them.
#ifndef CHORUS_TRAIN_TENSOR_VEC_MATH_H_
#define CHORUS_TRAIN_TENSOR_VEC_MATH_H_

#include <cmath>
#include <cstdint>
#include <cstring>

#include "tensor/hd.h"

// Compiles the function it marks for AVX-512, AVX2 and baseline x86-64, picking one at load time: the trainer
// is one binary for any x86-64 machine, yet its elementwise loops run at the width of the machine's vectors.
// The clones compute the same operations in the same order (no FMA contraction), so results are identical.
#if defined(__x86_64__) && !defined(__clang__)
#define CHORUS_TRAIN_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CHORUS_TRAIN_VECTOR_CLONES
#endif

namespace chorus::train {

// e^x for x in [-87, 88] (inputs outside are clamped: softmax and GELU never need more). The CUDA kernels call
// it too, so host and device exponentials agree bit for bit.
CHORUS_TRAIN_HD float expApprox(float x) {
  x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
  // x = n*ln2 + r with |r| <= ln2/2; n by the round-to-nearest trick (adding 1.5*2^23 leaves n in the mantissa).
  const float kShift = 12582912.0f;
  float t = x * 1.44269504088896341f + kShift;
  float n = t - kShift;
  float r = x - n * 0.693359375f;  // ln2 split in two so n*hi is exact
  r = r - n * -2.12194440e-4f;
  // Cephes' minimax polynomial for e^r on that interval.
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t scale = (floatBits(t) - 0x4B400000 + 127) << 23;  // 2^n
  return p * bitsFloat(scale);
}

template <typename T>
CHORUS_TRAIN_HD T vexp(T x) {
  using std::exp;
  return exp(x);
}
template <>
CHORUS_TRAIN_HD float vexp<float>(float x) {
  return expApprox(x);
}

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_TENSOR_VEC_MATH_H_
