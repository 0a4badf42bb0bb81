// Memory a process allocates for the peers on its host to map (chorusMemAlloc): a POSIX shared-memory segment per
// allocation, known by name. Where a buffer that is sent lies in one, the receiver maps the segment and copies the
// bytes with a plain memcpy, straight from the sender's buffer: one copy instead of two through a FIFO's slots, and
// without the kernel's copy of Cross Memory Attach (transport/cma.h), which is slow on some machines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace chorus {

class ShmSegment;

// The longest segment name a reference carries (transport/fifo.h, RemoteRef), its terminating NUL included. Segments
// with longer names are not registered (their buffers then travel as before).
constexpr size_t kSharedAllocNameBytes = 64;

// One allocation as its owner registered it.
struct SharedAlloc {
  uintptr_t base = 0;  // in the owner's address space
  size_t bytes = 0;
  char name[kSharedAllocNameBytes] = {};  // the segment's name, NUL-terminated
};

// Registers the segment `name` mapped at [base, base + bytes) in this process (chorusMemAlloc), until
// unregisterSharedAlloc(base).
void registerSharedAlloc(const void* base, size_t bytes, const std::string& name);
void unregisterSharedAlloc(const void* base);
// Whether [p, p + bytes) lies inside one registered allocation; if so, fills *out with it (out may be null). Cheap
// when nothing is registered (one atomic load).
bool findSharedAlloc(const void* p, size_t bytes, SharedAlloc* out = nullptr);

// The segment `name` of process `owner`, a peer on this host, mapped into this process (at least `bytes` long).
// Mappings are kept for the next reads (the least recently used dropped beyond a few), and the one returned stays
// mapped while the caller holds it. Throws chorusRemoteError for a name that is not an allocation of `owner`'s, or one
// that cannot be opened (its owner freed it or exited).
std::shared_ptr<const ShmSegment> mapPeerAlloc(const char* name, size_t bytes, int64_t owner);
// How many reads mapPeerAlloc has served in this process (for tests: that the mapped path was taken).
uint64_t peerAllocReads();
// Counts one read through a mapping (the caller's copy).
void notePeerAllocRead();

}  // namespace chorus
