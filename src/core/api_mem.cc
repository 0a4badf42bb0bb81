// C API: memory peers can reach (chorusMemAlloc) and buffer registration.
//
// On host ranks chorusMemAlloc returns memory in a named POSIX shared-memory segment, so that a peer on the
// same host can map it by name; registration records a user buffer with the communicator. The host data
// path does not take zero-copy shortcuts through either yet: both are accepted and kept so that programs
// written for NCCL (nccl-tests -R, PyTorch's allocator hooks) run unchanged.
#include <map>
#include <memory>
#include <mutex>

#include "base/shm.h"
#include "chorus/chorus.h"
#include "core/api_guard.h"
#include "core/comm.h"

using chorus::core::apiGuard;

namespace {

std::mutex memMu;
std::map<void*, std::unique_ptr<chorus::ShmSegment>>& allocations() {
  static auto* m = new std::map<void*, std::unique_ptr<chorus::ShmSegment>>();
  return *m;
}

struct Registration {
  const chorus::core::Comm* comm;
  void* buff;
  size_t size;
};

}  // namespace

extern "C" {

chorusResult_t chorusMemAlloc(void** ptr, size_t size) {
  return apiGuard("chorusMemAlloc", nullptr, [&] {
    CHORUS_CHECK_ARG(ptr != nullptr, "ptr is NULL");
    *ptr = nullptr;
    CHORUS_CHECK_ARG(size > 0, "size must be > 0");
    auto seg = std::make_unique<chorus::ShmSegment>(chorus::ShmSegment::create("mem", size));
    void* p = seg->data();
    std::lock_guard<std::mutex> lock(memMu);
    allocations()[p] = std::move(seg);
    *ptr = p;
    return chorusSuccess;
  });
}

chorusResult_t chorusMemFree(void* ptr) {
  return apiGuard("chorusMemFree", nullptr, [&] {
    if (ptr == nullptr) return chorusSuccess;
    std::lock_guard<std::mutex> lock(memMu);
    auto it = allocations().find(ptr);
    CHORUS_CHECK_ARG(it != allocations().end(), "ptr ", ptr, " was not returned by chorusMemAlloc");
    allocations().erase(it);
    return chorusSuccess;
  });
}

chorusResult_t chorusCommRegister(const chorusComm_t comm, void* buff, size_t size, void** handle) {
  return apiGuard("chorusCommRegister", nullptr, [&] {
    const chorus::core::Comm* c = chorus::core::checkComm(comm);
    CHORUS_CHECK_ARG(handle != nullptr, "handle is NULL");
    CHORUS_CHECK_ARG(buff != nullptr || size == 0, "buff is NULL");
    *handle = new Registration{c, buff, size};
    return chorusSuccess;
  });
}

chorusResult_t chorusCommDeregister(const chorusComm_t comm, void* handle) {
  return apiGuard("chorusCommDeregister", nullptr, [&] {
    const chorus::core::Comm* c = chorus::core::checkComm(comm);
    CHORUS_CHECK_ARG(handle != nullptr, "handle is NULL");
    auto* r = static_cast<Registration*>(handle);
    CHORUS_CHECK_ARG(r->comm == c, "handle was registered with another communicator");
    delete r;
    return chorusSuccess;
  });
}

}  // extern "C"
