// The trainer on a CUDA GPU (--device cuda): the rank's tensors in device memory, the layers as the kernels of
// device/kernels.h and cuBLAS GEMMs (TF32 off) on one compute stream, and the same parallel code over Chorus
// communicators on the GPU. Built when CMake finds CUDA (CHORUS_TRAIN_HAVE_CUDA).
//
// Run on an H100 (session 8) and an H200 (2026-11-27): the layer, engine and model tests (train_cuda_device_test) and
// train_proofs.py's TP, PP and GPU-equals-host proofs pass; ranks as processes train. Ranks as threads on one GPU
// hung with several gradient buckets per step, with ZeRO-3 and with 8 ranks of 3-D; suspected: CUDA's lazy kernel
// loading, which run/options.cc now turns off for them (not yet run on a GPU; docs/training.md).
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
