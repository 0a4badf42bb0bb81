// POSIX shared-memory segments: created by one process, opened by name by others on the same host.
#pragma once

#include <cstddef>
#include <string>

namespace chorus {

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
