// The trainer on a CUDA GPU (--device cuda): the rank's tensors in device memory, the layers as the kernels of
// device/kernels.h and cuBLAS GEMMs (TF32 off) on one compute stream, and the same parallel code over Chorus
// communicators on the GPU. Built when CMake finds CUDA (CHORUS_TRAIN_HAVE_CUDA).
//
// NOT YET RUN ON A GPU: this code has been compiled (nvcc, sm_80 and sm_90) but never executed. Its kernels and GEMM
// arguments run on the host through the "emulated" device, which the tests check against the host layers; the CUDA
// runtime calls, launch geometry, cuBLAS and the CUDA communicators have not run (tests/train gpu-label tests skip,
// saying why, without a GPU).
#ifndef CHORUS_TRAIN_CUDA_CUDA_DEVICE_H_
#define CHORUS_TRAIN_CUDA_CUDA_DEVICE_H_

#include <memory>
#include <string>

#include "tensor/device.h"

namespace chorus::train {

// Empty when this process can use a CUDA GPU; otherwise why not (the runtime's message), for a refusal before any work.
std::string cudaUnavailableReason();

// The GPU this rank uses: `localRank` modulo the visible devices (several ranks may share one GPU). Sets it as the
// calling thread's current CUDA device.
std::unique_ptr<Device> makeCudaDevice(int localRank);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_CUDA_CUDA_DEVICE_H_
