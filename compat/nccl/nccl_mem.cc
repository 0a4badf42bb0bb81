// NCCL's memory calls. ncclMemAlloc gives device memory where ranks are CUDA devices (cudaMalloc), and
// Chorus's shared host memory (chorusMemAlloc) where they are host ranks; registrations and windows forward.
#include <mutex>
#include <set>

#include "device_policy.h"
#include "nccl_abi.h"

using chorus::nccl::toNccl;

namespace {

std::mutex mu;
// Pointers ncclMemAlloc took from cudaMalloc, so that ncclMemFree returns each to its allocator.
std::set<void*>& deviceAllocations() {
  static auto* s = new std::set<void*>();
  return *s;
}

}  // namespace

NCCL_COMPAT_API(ncclResult_t, ncclMemAlloc, void** ptr, size_t size);
ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  if (ptr == nullptr || size == 0 || !chorus::nccl::cudaRanks()) return toNccl(chorusMemAlloc(ptr, size));
  if (!chorus::nccl::deviceMalloc(ptr, size)) return ncclUnhandledCudaError;
  std::lock_guard<std::mutex> lock(mu);
  deviceAllocations().insert(*ptr);
  return ncclSuccess;
}

NCCL_COMPAT_API(ncclResult_t, ncclMemFree, void* ptr);
ncclResult_t ncclMemFree(void* ptr) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (deviceAllocations().erase(ptr) != 0)
      return chorus::nccl::deviceFree(ptr) ? ncclSuccess : ncclUnhandledCudaError;
  }
  return toNccl(chorusMemFree(ptr));
}

NCCL_COMPAT_API(ncclResult_t, ncclCommRegister, const ncclComm_t comm, void* buff, size_t size, void** handle);
ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  return toNccl(chorusCommRegister(comm, buff, size, handle));
}

NCCL_COMPAT_API(ncclResult_t, ncclCommDeregister, const ncclComm_t comm, void* handle);
ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  return toNccl(chorusCommDeregister(comm, handle));
}

NCCL_COMPAT_API(ncclResult_t, ncclCommWindowRegister, ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                int winFlags);
ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags) {
  return toNccl(chorusCommWindowRegister(comm, buff, size, win, winFlags));
}

NCCL_COMPAT_API(ncclResult_t, ncclCommWindowDeregister, ncclComm_t comm, ncclWindow_t win);
ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  return toNccl(chorusCommWindowDeregister(comm, win));
}
