// POSIX shared-memory segments: created by one process, opened by name by others on the same host.
#pragma once

#include <cstddef>
#include <string>

#include <sys/types.h>

namespace chorus {

// Removes the segments (of any prefix) that process `pid` created on this host, if that process is gone
// (kill(pid, 0) fails with ESRCH): a rank killed before its peers mapped its FIFOs leaves them named. Called by
// survivors that see a peer exit, at exit, and by chorusrun for its ranks. Returns how many were removed.
int sweepSegmentsOf(pid_t pid);

// Remembers a process on this host whose segments this process sweeps at exit if it has died by then.
void watchPeerSegments(pid_t pid);

class ShmSegment {
 public:
  ShmSegment() = default;
  ~ShmSegment();
  ShmSegment(ShmSegment&& o) noexcept;
  ShmSegment& operator=(ShmSegment&& o) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  // Creates a zero-filled segment of `size` bytes under a fresh unique name with the given prefix; pages are
  // touched up front so that the first transfer does not pay for faults. Throws chorusSystemError when
  // /dev/shm is full.
  static ShmSegment create(const std::string& prefix, size_t size);
  // Maps an existing segment. Throws chorusSystemError if it does not exist or is smaller than size.
  static ShmSegment open(const std::string& name, size_t size);

  // Removes the name (the mapping stays valid). Call once every peer has opened it.
  void unlink();

  void* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }
  bool valid() const { return data_ != nullptr; }

 private:
  void reset();
  void* data_ = nullptr;
  size_t size_ = 0;
  std::string name_;
  bool owner_ = false;  // creator: unlinks on destruction if still named
};

}  // namespace chorus
