// The live handles of the C API: a chorusComm_t or chorusStream_t is checked against its registry before it
// is dereferenced, so that a destroyed or foreign handle is rejected with chorusInvalidArgument instead of
// being followed.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_set>
#include <vector>

namespace chorus::core {

class HandleRegistry {
 public:
  void add(const void* handle);
  void remove(const void* handle);
  // Whether `handle` is live. Every API call asks: a thread's repeated calls on the same handle take no lock
  // (a per-thread memo of the last handle found, valid while nothing was removed since).
  bool contains(const void* handle) const;

  // Destroys *obj (made with `new`) but never frees its memory, so that no later communicator or stream gets
  // its address: a stale handle then stays invalid for the life of the process instead of naming a new object
  // (chorusCommDestroy(old) destroying the communicator that reused old's address). Costs sizeof(T) per
  // object ever destroyed; the memory stays reachable (no leak report).
  template <typename T>
  void retire(T* obj) {
    remove(obj);
    obj->~T();
    keep(obj);
  }

 private:
  void keep(void* storage);
  mutable std::mutex mu_;
  std::unordered_set<const void*> live_;
  std::atomic<uint64_t> removals_{0};  // handles removed so far: a memo taken before a removal is stale
  std::vector<void*> retired_;
};

// The registries of communicators and of host streams. Never destroyed: atexit paths use them too.
HandleRegistry& commHandles();
HandleRegistry& streamHandles();

}  // namespace chorus::core
