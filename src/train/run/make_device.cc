#include "run/make_device.h"

#include <stdexcept>

#include "device/emulated_device.h"
#ifdef CHORUS_TRAIN_HAVE_CUDA
#include "cuda/cuda_device.h"
#endif

namespace chorus::train {
namespace {
void deleteDevice(Device* d) {
  delete d;
}
void keepDevice(Device* /*d*/) {}
}  // namespace

std::vector<std::string> availableDevices() {
#ifdef CHORUS_TRAIN_HAVE_CUDA
  return {"host", "cuda", "emulated"};
#else
  return {"host", "emulated"};
#endif
}

std::string deviceUnavailableReason(const std::string& name) {
  if (name == "host" || name == "emulated") return "";
  if (name != "cuda") return "--device " + name + ": unknown (host, cuda or emulated)";
#ifdef CHORUS_TRAIN_HAVE_CUDA
  std::string why = cudaUnavailableReason();
  return why.empty() ? "" : "--device cuda: " + why;
#else
  return "--device cuda: this build has no CUDA (CMake did not find nvcc; CHORUS_ENABLE_CUDA)";
#endif
}

DevicePtr makeDevice(const std::string& name, int rank) {
  if (name == "host") return DevicePtr(&Device::host(), keepDevice);
  if (name == "emulated") return DevicePtr(makeEmulatedDevice().release(), deleteDevice);
#ifdef CHORUS_TRAIN_HAVE_CUDA
  if (name == "cuda") return DevicePtr(makeCudaDevice(rank).release(), deleteDevice);
#else
  (void)rank;
#endif
  throw std::invalid_argument(deviceUnavailableReason(name));
}

}  // namespace chorus::train
