// Where the ranks of an NCCL program run. NCCL's ranks are CUDA devices: ncclCommInitRank uses the current
// device, ncclCommInitAll with a NULL devlist devices 0..ndev-1. Chorus also has host ranks, and a program
// built for NCCL runs on them unchanged when it uses host buffers and the NULL stream.
//
// CHORUS_NCCL_DEVICE chooses: "host" (every rank is a host rank), "cuda" (every rank a CUDA device, as NCCL),
// or "auto" (the default): CUDA when the CUDA runtime (libcudart, loaded with dlopen) reports at least one
// device, host otherwise. In host mode CUDA device numbers (the current device, a devlist) are ignored, and
// ncclCommCuDevice reports -1 (CHORUS_DEVICE_HOST).
#pragma once

#include <cstddef>

namespace chorus::nccl {

// True when ranks are CUDA devices (decided once per process).
bool cudaRanks();
// The current CUDA device (cudaGetDevice); 0 when it cannot be read.
int currentDevice();
// cudaMalloc / cudaFree through the loaded runtime; false when there is none or the call failed.
bool deviceMalloc(void** ptr, size_t size);
bool deviceFree(void* ptr);

}  // namespace chorus::nccl
