// The bfloat16 row for AVX-512 CPUs with AVX512_BF16 (Cooper Lake, Sapphire Rapids, Zen 4): narrowing with
// vcvtneps2bf16. Only this row is instantiated; the other types are the same as kernels_avx512.cc.
#include "collectives/reduce/kernels_prelude.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,avx2,f16c")
#define CHORUS_KERNEL_NS avx512bf16
#define CHORUS_KERNEL_VEC_BYTES 64
#define CHORUS_KERNEL_F16C 1
#define CHORUS_KERNEL_AVX512 1
#define CHORUS_KERNEL_BF16 1
#include "collectives/reduce/kernels_impl.h"
#pragma GCC pop_options
