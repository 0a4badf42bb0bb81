// CHORUS_HOST_DEVICE marks functions that compile both for the host (g++) and for CUDA kernels (nvcc); the
// algorithm templates in src/collectives use it so that one source serves both executors.
#pragma once

#if defined(__CUDACC__)
#define CHORUS_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define CHORUS_HOST_DEVICE inline
#endif
