#include "transport/net/ib/mr_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace chorus::netplugin::ib {
namespace {

uintptr_t pageSize() {
  static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return page;
}

}  // namespace

MrCache::MrCache(RegisterFn reg, DeregisterFn dereg) : reg_(std::move(reg)), dereg_(std::move(dereg)) {}

MrCache::~MrCache() {
  for (auto& e : entries_) dereg_(e->mr);
}

MrCache::Entry* MrCache::acquire(const void* data, size_t size, int type, std::string* why) {
  const uintptr_t page = pageSize();
  const auto addr = reinterpret_cast<uintptr_t>(data);
  const uintptr_t start = addr & ~(page - 1);
  // A zero-byte buffer still names a page, so that its address has a registration to check against.
  const uintptr_t end = (addr + std::max<size_t>(size, 1) + page - 1) & ~(page - 1);
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& e : entries_) {
    if (e->type == type && e->start == start && e->end == end) {
      ++e->refs;
      return e.get();
    }
  }
  ibv_mr* mr = reg_(start, end - start, type, why);
  if (mr == nullptr) return nullptr;
  entries_.push_back(std::make_unique<Entry>(Entry{this, start, end, type, mr, 1}));
  return entries_.back().get();
}

bool MrCache::release(Entry* e, std::string* why) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find_if(entries_.begin(), entries_.end(), [e](const auto& p) { return p.get() == e; });
  if (it == entries_.end()) {
    *why = "the memory handle is not a live registration";
    return false;
  }
  if (--e->refs > 0) return true;
  int err = dereg_(e->mr);
  entries_.erase(it);
  if (err != 0) {
    *why = std::string("ibv_dereg_mr: ") + strerror(err);
    return false;
  }
  return true;
}

size_t MrCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace chorus::netplugin::ib
