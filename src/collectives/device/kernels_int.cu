// Kernels of the CUDA executor for the int group of CHORUS_DEVICE_DTYPES (device_kernel_table.h).
#include "collectives/device/device_kernel.cuh"

namespace chorus::coll::device {

CHORUS_DEVICE_KERNELS(kInt8)
CHORUS_DEVICE_KERNELS(kUint8)
CHORUS_DEVICE_KERNELS(kInt32)
CHORUS_DEVICE_KERNELS(kUint32)
CHORUS_DEVICE_KERNELS(kInt64)
CHORUS_DEVICE_KERNELS(kUint64)

}  // namespace chorus::coll::device
