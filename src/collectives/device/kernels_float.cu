// Kernels of the CUDA executor for the float group of CHORUS_DEVICE_DTYPES (device_kernel_table.h).
#include "collectives/device/device_kernel.cuh"

namespace chorus::coll::device {

CHORUS_DEVICE_KERNELS(kFloat16)
CHORUS_DEVICE_KERNELS(kFloat32)
CHORUS_DEVICE_KERNELS(kFloat64)
CHORUS_DEVICE_KERNELS(kBfloat16)

}  // namespace chorus::coll::device
