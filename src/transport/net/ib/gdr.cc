#include "transport/net/ib/gdr.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "transport/net/net.h"

namespace chorus::netplugin::ib {
namespace {

// cuMemGetHandleForAddressRange(void* handle, CUdeviceptr ptr, size_t size, CUmemRangeHandleType type,
// unsigned long long flags), CUDA 11.7+; handle type 1 is CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD.
using GetHandleFn = int (*)(void*, unsigned long long, size_t, int, unsigned long long);
constexpr int kDmaBufFd = 1;

// The CUDA driver's export function, from a driver the process has loaded already (a process with CUDA
// memory to register has: the CUDA runtime loads it); a host-only process does not load it for nothing.
GetHandleFn cudaGetHandle() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  return lib == nullptr ? nullptr : reinterpret_cast<GetHandleFn>(dlsym(lib, "cuMemGetHandleForAddressRange"));
}

}  // namespace

bool dmabufUsable(const IbVerbs& v, ibv_pd* pd) {
  if (v.regDmabufMr == nullptr) return false;
  errno = 0;
  ibv_mr* mr = v.regDmabufMr(pd, 0, 0, 0, -1, 0);
  if (mr != nullptr) {  // cannot happen with fd -1; never leak it
    v.deregMr(mr);
    return false;
  }
  if (errno == EOPNOTSUPP || errno == EPROTONOSUPPORT) return false;
  return cudaGetHandle() != nullptr;
}

ibv_mr* registerMemory(const IbVerbs& v, ibv_pd* pd, bool dmabuf, uintptr_t start, size_t length, int type, int access,
                       std::string* why) {
  if (type == CHORUS_PTR_HOST || (type == CHORUS_PTR_CUDA && v.peermemLoaded())) {
    ibv_mr* mr = v.regMr(pd, reinterpret_cast<void*>(start), length, access);
    if (mr == nullptr) *why = std::string("ibv_reg_mr: ") + strerror(errno);
    return mr;
  }
  if (type != CHORUS_PTR_CUDA) {
    *why = "unknown memory type " + std::to_string(type);
    return nullptr;
  }
  if (!dmabuf) {
    *why = "GPU memory cannot be registered here (no nvidia-peermem module and no dma-buf support)";
    return nullptr;
  }
  int fd = -1;
  int r = cudaGetHandle()(&fd, start, length, kDmaBufFd, 0);
  if (r != 0 || fd < 0) {
    *why = "cuMemGetHandleForAddressRange (dma-buf) failed with CUresult " + std::to_string(r);
    return nullptr;
  }
  ibv_mr* mr = v.regDmabufMr(pd, 0, length, start, fd, access);
  int err = errno;
  close(fd);
  if (mr == nullptr) *why = std::string("ibv_reg_dmabuf_mr: ") + strerror(err);
  return mr;
}

}  // namespace chorus::netplugin::ib
