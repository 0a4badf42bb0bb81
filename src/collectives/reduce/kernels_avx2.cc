// 256-bit kernels for CPUs with AVX2 and F16C (every AVX2 CPU has F16C; bestIsa() checks both).
#include "collectives/reduce/kernels_prelude.h"

#pragma GCC push_options
#pragma GCC target("avx2,f16c")
#define CHORUS_KERNEL_NS avx2
#define CHORUS_KERNEL_VEC_BYTES 32
#define CHORUS_KERNEL_F16C 1
#define CHORUS_KERNEL_AVX512 0
#define CHORUS_KERNEL_BF16 0
#include "collectives/reduce/kernels_impl.h"
#pragma GCC pop_options
