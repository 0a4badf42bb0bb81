#include "base/shared_alloc.h"

#include <atomic>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <utility>

#include "base/error.h"
#include "base/shm.h"

namespace chorus {

namespace {

// The names chorusMemAlloc gives its segments (base/shm.cc: "/chorus-<prefix>-<pid>-..."): a reference naming
// anything else is refused rather than opened.
constexpr char kAllocPrefix[] = "/chorus-mem-";

// Mappings of peers' allocations kept for the next reads: a loop that sends from the same buffers maps them once.
constexpr size_t kKeptMappings = 16;

struct Registry {
  std::mutex mu;
  std::map<uintptr_t, SharedAlloc> byBase;
  std::atomic<size_t> count{0};
};

Registry& registry() {
  static auto* r = new Registry();  // never destroyed: sends may look it up during exit
  return *r;
}

struct Mapped {
  std::string name;
  std::shared_ptr<const ShmSegment> segment;
};

struct PeerMappings {
  std::mutex mu;
  std::list<Mapped> recent;  // most recently used first
  std::atomic<uint64_t> reads{0};
};

PeerMappings& peerMappings() {
  static auto* m = new PeerMappings();
  return *m;
}

}  // namespace

void registerSharedAlloc(const void* base, size_t bytes, const std::string& name) {
  if (name.size() >= kSharedAllocNameBytes || name.rfind(kAllocPrefix, 0) != 0) return;
  SharedAlloc a;
  a.base = reinterpret_cast<uintptr_t>(base);
  a.bytes = bytes;
  memcpy(a.name, name.c_str(), name.size() + 1);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.byBase[a.base] = a;
  r.count.store(r.byBase.size(), std::memory_order_release);
}

void unregisterSharedAlloc(const void* base) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.byBase.erase(reinterpret_cast<uintptr_t>(base));
  r.count.store(r.byBase.size(), std::memory_order_release);
}

bool findSharedAlloc(const void* p, size_t bytes, SharedAlloc* out) {
  Registry& r = registry();
  if (r.count.load(std::memory_order_acquire) == 0 || p == nullptr) return false;
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.byBase.upper_bound(at);
  if (it == r.byBase.begin()) return false;
  --it;
  const SharedAlloc& a = it->second;
  if (at - a.base > a.bytes || bytes > a.bytes - (at - a.base)) return false;
  if (out != nullptr) *out = a;
  return true;
}

std::shared_ptr<const ShmSegment> mapPeerAlloc(const char* name, size_t bytes, int64_t owner) {
  const size_t len = strnlen(name, kSharedAllocNameBytes);
  const std::string key(name, len);
  // base/shm.cc names a segment "/chorus-<prefix>-<pid>-...": the owner's pid follows the prefix.
  const std::string ownerPrefix = kAllocPrefix + std::to_string(owner) + "-";
  if (len == kSharedAllocNameBytes || key.rfind(ownerPrefix, 0) != 0) {
    CHORUS_THROW(Status::kRemoteError,
                 "a reference names shared memory that is not a chorusMemAlloc allocation of "
                 "process ",
                 owner, " (\"", key, "\")");
  }
  PeerMappings& m = peerMappings();
  std::lock_guard<std::mutex> lock(m.mu);
  for (auto it = m.recent.begin(); it != m.recent.end(); ++it) {
    if (it->name != key || it->segment->size() < bytes) continue;
    m.recent.splice(m.recent.begin(), m.recent, it);
    return m.recent.front().segment;
  }
  // Opened under the lock: mapping a peer's buffer happens once per buffer, and two threads reading the same one
  // then share the mapping.
  std::shared_ptr<const ShmSegment> segment;
  try {
    segment = std::make_shared<const ShmSegment>(ShmSegment::open(key, bytes));
  } catch (const Error& e) {
    // Freed, or its owner exited (survivors sweep a dead peer's segments): the sender is gone as far as this read goes.
    CHORUS_THROW(Status::kRemoteError, "cannot map the sender's buffer (", e.what(),
                 "): it was freed before the receiver read it, or its process exited");
  }
  m.recent.push_front(Mapped{key, segment});
  if (m.recent.size() > kKeptMappings) m.recent.pop_back();  // a reader still holding it keeps it mapped
  return segment;
}

uint64_t peerAllocReads() {
  return peerMappings().reads.load(std::memory_order_relaxed);
}

void notePeerAllocRead() {
  peerMappings().reads.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace chorus
