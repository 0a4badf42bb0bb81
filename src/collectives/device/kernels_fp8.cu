// Kernels of the CUDA executor for the fp8 group of CHORUS_DEVICE_DTYPES (device_kernel_table.h).
#include "collectives/device/device_kernel.cuh"

namespace chorus::coll::device {

CHORUS_DEVICE_KERNELS(kFloat8e4m3)
CHORUS_DEVICE_KERNELS(kFloat8e5m2)
CHORUS_DEVICE_P2P_KERNEL()

}  // namespace chorus::coll::device
