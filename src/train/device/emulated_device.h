// The "emulated" device (--device emulated): the CUDA path's kernels and GEMM calls run on the host
// (KernelDevice<HostExec>), so the trainer's device path can be tested, layout by layout, without a GPU.
#ifndef CHORUS_TRAIN_DEVICE_EMULATED_DEVICE_H_
#define CHORUS_TRAIN_DEVICE_EMULATED_DEVICE_H_

#include <memory>

#include "tensor/device.h"

namespace chorus::train {

std::unique_ptr<Device> makeEmulatedDevice();

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_DEVICE_EMULATED_DEVICE_H_
