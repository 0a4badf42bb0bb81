// The scalar reference: one lane at a time, baseline x86-64. Every other ISA is tested bit for bit against it.
#include "collectives/reduce/kernels_prelude.h"

#define CHORUS_KERNEL_NS scalar
#define CHORUS_KERNEL_VEC_BYTES 0
#define CHORUS_KERNEL_F16C 0
#define CHORUS_KERNEL_AVX512 0
#define CHORUS_KERNEL_BF16 0
#include "collectives/reduce/kernels_impl.h"
