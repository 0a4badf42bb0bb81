// What lets one function serve the host and a CUDA kernel: CHORUS_TRAIN_HD marks a function nvcc compiles for both (g++
// sees an ordinary inline function), and bitCast reinterprets a float's bits on either side. The element-wise
// arithmetic of the layers and of AdamW is written once this way, so the host, the CUDA kernels and their emulation on
// the host (device/host_exec.h) compute every element with the same operations.
#ifndef CHORUS_TRAIN_TENSOR_HD_H_
#define CHORUS_TRAIN_TENSOR_HD_H_

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define CHORUS_TRAIN_HD __host__ __device__ inline
#else
#define CHORUS_TRAIN_HD inline
#endif

namespace chorus::train {

CHORUS_TRAIN_HD int32_t floatBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_int(f);
#else
  int32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

CHORUS_TRAIN_HD float bitsFloat(int32_t u) {
#if defined(__CUDA_ARCH__)
  return __int_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_TENSOR_HD_H_
