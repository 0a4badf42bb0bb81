#include "core/handle_registry.h"

namespace chorus::core {

void HandleRegistry::add(const void* handle) {
  std::lock_guard<std::mutex> lock(mu_);
  live_.insert(handle);
}

void HandleRegistry::remove(const void* handle) {
  std::lock_guard<std::mutex> lock(mu_);
  live_.erase(handle);
}

bool HandleRegistry::contains(const void* handle) const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_.count(handle) != 0;
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
