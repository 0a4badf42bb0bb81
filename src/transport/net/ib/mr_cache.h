// The ib plugin's memory-registration cache, one per protection domain (NCCL's ncclIbMrCache). Registering
// memory pins its pages and costs a system call, and the same buffer is registered on several comms of a
// device: registering the same range again (after rounding out to whole pages) reuses its registration and
// takes a reference; the memory is deregistered when the last reference goes.
//
// Only the same range is reused, not a range inside a larger registration as NCCL's cache allows: a larger
// registration may outlive the buffer it was made for (another buffer sharing its last page keeps it alive),
// and memory mapped later at the freed addresses would then be "covered" by pages that are no longer its
// own. Only live registrations are cached, so memory freed and mapped again is registered afresh.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace chorus::netplugin::ib {

class MrCache {
 public:
  // Registers [start, start + length) of memory kind `type` (CHORUS_PTR_HOST or CHORUS_PTR_CUDA); nullptr with
  // *why on failure.
  using RegisterFn = std::function<ibv_mr*(uintptr_t start, size_t length, int type, std::string* why)>;
  // Deregisters; 0 or an errno value.
  using DeregisterFn = std::function<int(ibv_mr*)>;

  struct Entry {
    MrCache* owner;
    uintptr_t start;  // page-aligned
    uintptr_t end;
    int type;
    ibv_mr* mr;
    int refs;
    // Whether [p, p + n) lies inside this registration.
    bool covers(const void* p, size_t n) const {
      auto a = reinterpret_cast<uintptr_t>(p);
      return a >= start && a + n <= end && a + n >= a;
    }
  };

  MrCache(RegisterFn reg, DeregisterFn dereg);
  ~MrCache();  // deregisters what is left (a caller that never deregistered)
  MrCache(const MrCache&) = delete;
  MrCache& operator=(const MrCache&) = delete;

  // A registration of the pages of [data, data + size) of kind `type`: the existing one of exactly those pages
  // with one more reference, or a new one. nullptr with *why when registering failed.
  Entry* acquire(const void* data, size_t size, int type, std::string* why);
  // Drops one reference of `e` (from acquire), deregistering at zero. false with *why when `e` is not a live
  // entry of this cache or the deregistration failed.
  bool release(Entry* e, std::string* why);
  // Live registrations (for tests and logs).
  size_t size() const;

 private:
  RegisterFn reg_;
  DeregisterFn dereg_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Entry>> entries_;
};

}  // namespace chorus::netplugin::ib
