#include "device/emulated_device.h"

#include "device/host_exec.h"
#include "device/kernel_device.h"

namespace chorus::train {

std::unique_ptr<Device> makeEmulatedDevice() {
  return std::make_unique<KernelDevice<HostExec>>();
}

}  // namespace chorus::train
