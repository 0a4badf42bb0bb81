// 512-bit kernels for AVX-512 F+BW+DQ+VL (Skylake-SP and later). bfloat16 rounds in software here;
// kernels_avx512_bf16.cc has the AVX512_BF16 variant that dispatch.cc prefers where the CPU has it.
#include "collectives/reduce/kernels_prelude.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx2,f16c")
#define CHORUS_KERNEL_NS avx512
#define CHORUS_KERNEL_VEC_BYTES 64
#define CHORUS_KERNEL_F16C 1
#define CHORUS_KERNEL_AVX512 1
#define CHORUS_KERNEL_BF16 0
#include "collectives/reduce/kernels_impl.h"
#pragma GCC pop_options
