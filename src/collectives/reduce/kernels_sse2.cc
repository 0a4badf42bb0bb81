// 128-bit kernels: the x86-64 baseline, so no target pragma. Narrow types convert in software (no F16C).
#include "collectives/reduce/kernels_prelude.h"

#define CHORUS_KERNEL_NS sse2
#define CHORUS_KERNEL_VEC_BYTES 16
#define CHORUS_KERNEL_F16C 0
#define CHORUS_KERNEL_AVX512 0
#define CHORUS_KERNEL_BF16 0
#include "collectives/reduce/kernels_impl.h"
