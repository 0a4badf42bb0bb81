#include "core/handle_registry.h"

namespace chorus::core {

void HandleRegistry::add(const void* handle) {
  std::lock_guard<std::mutex> lock(mu_);
  live_.insert(handle);
}

void HandleRegistry::remove(const void* handle) {
  std::lock_guard<std::mutex> lock(mu_);
  live_.erase(handle);
  removals_.fetch_add(1, std::memory_order_release);
}

bool HandleRegistry::contains(const void* handle) const {
  // One memo per registry (communicators, streams) per thread. The lock it saves is taken by every rank's thread
  // of a process on every call, and cost a send/recv pair about 300 instructions with no contention at all.
  struct Memo {
    const HandleRegistry* registry = nullptr;
    const void* handle = nullptr;
    uint64_t removals = 0;
  };
  thread_local Memo memos[2];
  // Read before the look-up: a removal after this read makes the memo written below stale, never wrong.
  const uint64_t removals = removals_.load(std::memory_order_acquire);
  Memo* slot = nullptr;  // this registry's memo, else a free one
  for (Memo& m : memos) {
    if (m.registry == this) {
      if (m.handle == handle && m.removals == removals) return true;
      slot = &m;
      break;
    }
    if (m.registry == nullptr && slot == nullptr) slot = &m;
  }
  bool live;
  {
    std::lock_guard<std::mutex> lock(mu_);
    live = live_.count(handle) != 0;
  }
  if (live && slot != nullptr) *slot = Memo{this, handle, removals};
  return live;
}

void HandleRegistry::keep(void* storage) {
  std::lock_guard<std::mutex> lock(mu_);
  retired_.push_back(storage);
}

HandleRegistry& commHandles() {
  static auto* r = new HandleRegistry();
  return *r;
}

HandleRegistry& streamHandles() {
  static auto* r = new HandleRegistry();
  return *r;
}

}  // namespace chorus::core
