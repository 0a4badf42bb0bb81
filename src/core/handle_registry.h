// The live handles of the C API: a chorusComm_t or chorusStream_t is checked against its registry before it
// is dereferenced, so that a destroyed or foreign handle is rejected with chorusInvalidArgument instead of
// being followed.
#pragma once

#include <mutex>
#include <unordered_set>

namespace chorus::core {

class HandleRegistry {
 public:
  void add(const void* handle);
  void remove(const void* handle);
  bool contains(const void* handle) const;

 private:
  mutable std::mutex mu_;
  std::unordered_set<const void*> live_;
};

// The registries of communicators and of host streams. Never destroyed: atexit paths use them too.
HandleRegistry& commHandles();
HandleRegistry& streamHandles();

}  // namespace chorus::core
