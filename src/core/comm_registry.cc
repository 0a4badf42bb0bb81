#include "core/comm_registry.h"

#include <mutex>
#include <unordered_set>

namespace chorus::core {

namespace {
std::mutex mu;
std::unordered_set<const void*>& live() {
  static auto* s = new std::unordered_set<const void*>();  // never destroyed: used from atexit paths too
  return *s;
}
}  // namespace

void registerComm(Comm* comm) {
  std::lock_guard<std::mutex> lock(mu);
  live().insert(comm);
}

void unregisterComm(Comm* comm) {
  std::lock_guard<std::mutex> lock(mu);
  live().erase(comm);
}

bool isRegisteredComm(const void* handle) {
  std::lock_guard<std::mutex> lock(mu);
  return live().count(handle) != 0;
}

}  // namespace chorus::core
