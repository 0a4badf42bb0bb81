// The explicit instantiation list of the CUDA executor's kernels, and the table the host launches from.
//
// CHORUS_DEVICE_DTYPES(X) names every element type; each appears in exactly one kernels_<group>.cu, which
// defines launchColl_<kType> for it. The table (device_kernel_table.cu) maps reduce::DType to its launcher;
// tests/cuda checks that every type has one, which needs no GPU.
#pragma once

#include "chorus_build_config.h"
#include "collectives/reduce/reduce.h"

#define CHORUS_DEVICE_DTYPES(X) \
  X(kInt8)                      \
  X(kUint8)                     \
  X(kInt32)                     \
  X(kUint32)                    \
  X(kInt64)                     \
  X(kUint64)                    \
  X(kFloat16)                   \
  X(kFloat32)                   \
  X(kFloat64)                   \
  X(kBfloat16)                  \
  X(kFloat8e4m3)                \
  X(kFloat8e5m2)

namespace chorus::coll::device {

constexpr int kDevThreadsPerBlock = 512;

}  // namespace chorus::coll::device

#if CHORUS_BUILD_CUDA && defined(__CUDACC__)
#include <cuda_runtime.h>

#include "collectives/device/device_launch_args.h"

namespace chorus::coll::device {
#define CHORUS_DECLARE_LAUNCHER(kType)                                         \
  cudaError_t launchColl_##kType(const DevCollLaunch& l, cudaStream_t stream); \
  const void* collKernelSymbol_##kType();
CHORUS_DEVICE_DTYPES(CHORUS_DECLARE_LAUNCHER)
#undef CHORUS_DECLARE_LAUNCHER
cudaError_t launchP2p(const DevP2pLaunch& l, cudaStream_t stream);
const void* p2pKernelSymbol();
}  // namespace chorus::coll::device
#endif

namespace chorus::coll::device {

// One row of the table, free of CUDA types so that host C++ (and host tests) can read it.
struct DevKernelEntry {
  reduce::DType dtype;
  const char* name;  // "kFloat32"
  // Launches the collective kernel: (const DevCollLaunch*, cudaStream_t) -> cudaError_t as int.
  int (*launch)(const void* launch, void* stream);
  const void* (*symbol)();  // the __global__ function, for cudaFuncGetAttributes
};

// The table, in CHORUS_DEVICE_DTYPES order; *n receives its length. Defined only in CUDA builds.
const DevKernelEntry* deviceKernelTable(int* n);
// Launches the point-to-point kernel ((const DevP2pLaunch*, cudaStream_t) -> cudaError_t as int).
int launchDeviceP2p(const void* launch, void* stream);
// The point-to-point kernel's __global__ function, for cudaFuncGetAttributes.
const void* deviceP2pSymbol();

}  // namespace chorus::coll::device
