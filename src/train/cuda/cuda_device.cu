// KernelDevice over CUDA: the kernels of device/kernels.h instantiated for the GPU (cuda_device.h says what has run).
#include "cuda/cuda_device.h"
#include "cuda/cuda_exec.cuh"
#include "device/kernel_device.h"

namespace chorus::train {

std::string cudaUnavailableReason() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return std::string("no usable CUDA device: ") + cudaGetErrorString(e);
  if (n == 0) return "no CUDA device visible (0 devices)";
  return "";
}

std::unique_ptr<Device> makeCudaDevice(int localRank) {
  int n = 0;
  checkCuda(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
  if (n == 0) throw std::runtime_error("no CUDA device visible");
  return std::make_unique<KernelDevice<CudaExec>>(localRank % n);
}

}  // namespace chorus::train
