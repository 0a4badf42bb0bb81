// GPUDirect RDMA for the ib plugin: registering CUDA memory so that the HCA reads and writes GPU memory
// directly. Two ways exist, as in NCCL: a peer-memory client in the kernel (nvidia-peermem, or MLNX_OFED's
// nv_peer_mem), with which ibv_reg_mr accepts a device pointer; or dma-buf (Linux 5.12+, rdma-core 34+, CUDA
// 11.7+ driver), where the CUDA driver exports the range as a dma-buf fd and ibv_reg_dmabuf_mr registers it.
// The CUDA driver (libcuda.so.1) is used only when the process has loaded it already (the CUDA runtime does),
// so that a host-only process never loads it.
#pragma once

#include <cstdint>
#include <string>

#include "transport/net/ib/verbs.h"

namespace chorus::netplugin::ib {

// Whether dma-buf registration can work on this protection domain: rdma-core has ibv_reg_dmabuf_mr, the kernel
// supports it (a probe with fd -1 fails with EBADF rather than EOPNOTSUPP, NCCL's test) and the CUDA driver,
// loaded in this process when init runs, exports cuMemGetHandleForAddressRange (CUDA 11.7+).
bool dmabufUsable(const IbVerbs& verbs, ibv_pd* pd);

// Registers [start, start + length) (page-aligned) of kind `type`: host memory with ibv_reg_mr; CUDA memory
// with ibv_reg_mr when a peer-memory client is loaded, else through dma-buf when `dmabuf`. nullptr with *why
// when it fails or GPU memory cannot be registered here.
ibv_mr* registerMemory(const IbVerbs& verbs, ibv_pd* pd, bool dmabuf, uintptr_t start, size_t length, int type,
                       int access, std::string* why);

}  // namespace chorus::netplugin::ib
