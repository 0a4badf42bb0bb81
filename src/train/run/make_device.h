// The device a rank trains on, from --device: "host" (OpenBLAS), "cuda" (a GPU, in builds with CUDA) or "emulated" (the
// CUDA path's kernels on the host, for testing it without a GPU).
#ifndef CHORUS_TRAIN_RUN_MAKE_DEVICE_H_
#define CHORUS_TRAIN_RUN_MAKE_DEVICE_H_

#include <memory>
#include <string>
#include <vector>

#include "tensor/device.h"

namespace chorus::train {

// The --device values this build accepts.
std::vector<std::string> availableDevices();

// Empty when `name` can be used in this process; otherwise why not (no CUDA in this build, no GPU visible).
std::string deviceUnavailableReason(const std::string& name);

// The device of the rank `rank` (ranks share the visible GPUs round-robin). "host" gives the process's host device,
// which the caller must not delete: it comes back as a non-owning pointer in a unique_ptr with a no-op deleter.
using DevicePtr = std::unique_ptr<Device, void (*)(Device*)>;
DevicePtr makeDevice(const std::string& name, int rank);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_RUN_MAKE_DEVICE_H_
