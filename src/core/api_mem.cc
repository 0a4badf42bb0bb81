// C API: memory peers can reach (chorusMemAlloc), buffer registration and windows.
//
// On host ranks chorusMemAlloc returns memory in a named POSIX shared-memory segment, so that a peer on the
// same host can map it by name (base/shared_alloc.h): a point-to-point transfer (send/recv, all-to-all, gather,
// scatter) of 64 KiB or more from such a buffer to a peer that waits for it is read by the peer straight from it, one
// copy. Registration records a user buffer with the communicator and takes no shortcut (a peer cannot map arbitrary
// memory); it is accepted and kept so that programs written for NCCL (nccl-tests -R, PyTorch's allocator hooks) run
// unchanged. Windows are registrations that every rank makes together, checked across ranks (flags, and for
// symmetric windows size and alignment); Chorus has no one-sided operations (NCCL's are in its device API), so nothing
// reads a peer's window.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "base/shared_alloc.h"
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

struct Window {
  const chorus::core::Comm* comm;
  void* buff;
  size_t size;
  int flags;
};

// Live windows, so that a stale or foreign handle is rejected instead of being dereferenced.
std::set<const Window*>& windows() {
  static auto* w = new std::set<const Window*>();
  return *w;
}

// What every rank learns about the others' windows at registration.
struct WindowInfo {
  uint64_t size;
  int32_t flags;
  int32_t aligned;
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
    chorus::registerSharedAlloc(p, size, seg->name());
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
    chorus::unregisterSharedAlloc(ptr);
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

chorusResult_t chorusCommWindowRegister(chorusComm_t comm, void* buff, size_t size, chorusWindow_t* win, int winFlags) {
  return apiGuard("chorusCommWindowRegister", nullptr, [&] {
    chorus::core::Comm* c = chorus::core::checkComm(comm);
    CHORUS_CHECK_ARG(win != nullptr, "win is NULL");
    *win = nullptr;
    CHORUS_CHECK_ARG(buff != nullptr && size > 0, "buff must be a non-empty buffer (buff ", buff, ", size ", size, ")");
    CHORUS_CHECK_ARG(winFlags == CHORUS_WIN_DEFAULT || winFlags == CHORUS_WIN_COLL_SYMMETRIC, "winFlags ", winFlags,
                     " is not CHORUS_WIN_DEFAULT or CHORUS_WIN_COLL_SYMMETRIC");
    CHORUS_CHECK_USAGE(c->device() < 0, "windows are not implemented on CUDA communicators (device ", c->device(),
                       "): Chorus has no device-side one-sided API");
    // Collective: every rank checks that the others registered a matching window.
    std::vector<WindowInfo> all(c->nranks());
    all[c->rank()] = {size, winFlags, reinterpret_cast<uintptr_t>(buff) % CHORUS_WIN_REQUIRED_ALIGNMENT == 0 ? 1 : 0};
    c->bootstrap().allgather(all.data(), sizeof(WindowInfo), c->waitContext("chorusCommWindowRegister exchange"));
    for (int r = 0; r < c->nranks(); ++r) {
      CHORUS_CHECK_USAGE(all[r].flags == winFlags, "rank ", r, " registered its window with winFlags ", all[r].flags,
                         ", this rank with ", winFlags);
      if (winFlags != CHORUS_WIN_COLL_SYMMETRIC) continue;
      CHORUS_CHECK_USAGE(all[r].size == size, "symmetric window: rank ", r, " registered ", all[r].size,
                         " bytes, this rank ", size);
      CHORUS_CHECK_USAGE(all[r].aligned != 0, "symmetric window: rank ", r, "'s buffer is not aligned to ",
                         CHORUS_WIN_REQUIRED_ALIGNMENT, " bytes (CHORUS_WIN_REQUIRED_ALIGNMENT)");
    }
    auto* w = new Window{c, buff, size, winFlags};
    std::lock_guard<std::mutex> lock(memMu);
    windows().insert(w);
    *win = reinterpret_cast<chorusWindow_t>(w);
    return chorusSuccess;
  });
}

chorusResult_t chorusCommWindowDeregister(chorusComm_t comm, chorusWindow_t win) {
  return apiGuard("chorusCommWindowDeregister", nullptr, [&] {
    chorus::core::Comm* c = chorus::core::checkComm(comm);
    auto* w = reinterpret_cast<Window*>(win);
    {
      std::lock_guard<std::mutex> lock(memMu);
      CHORUS_CHECK_ARG(win != nullptr && windows().count(w) != 0, "win is not a registered window");
      CHORUS_CHECK_ARG(w->comm == c, "win was registered with another communicator");
      windows().erase(w);
    }
    delete w;
    // Collective, as NCCL's: no rank leaves before every rank has released its window.
    c->bootstrap().barrier(c->waitContext("chorusCommWindowDeregister"));
    return chorusSuccess;
  });
}

}  // extern "C"
