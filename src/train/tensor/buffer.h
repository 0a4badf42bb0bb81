// A flat, 64-byte aligned, zero-initialised array that owns its memory and charges the rank's MemoryLedger.
// Parameters, gradients and Adam moments each live in one Buffer, so a shard is a range of one and a bucket
// is a range of one; activations and communication buffers are Buffers too, so the ledger sees them all.
// The memory is the rank's Device's (Device::current() when the buffer is sized): on a GPU, element access
// from the host (operator[]) is not allowed; data moves through the Device.
#ifndef CHORUS_TRAIN_TENSOR_BUFFER_H_
#define CHORUS_TRAIN_TENSOR_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <utility>

#include "tensor/device.h"
#include "tensor/memory_ledger.h"

namespace chorus::train {

template <typename T>
class Buffer {
 public:
  Buffer() = default;
  Buffer(int64_t n, MemKind kind) { resize(n, kind); }
  ~Buffer() { release(); }
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      kind_ = o.kind_;
      ledger_ = std::exchange(o.ledger_, nullptr);
      device_ = std::exchange(o.device_, nullptr);
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // Frees what is held and allocates n zeroed elements charged to `kind`.
  void resize(int64_t n, MemKind kind) {
    release();
    kind_ = kind;
    if (n <= 0) return;
    device_ = &Device::current();
    const size_t bytes = static_cast<size_t>(n) * sizeof(T);
    data_ = static_cast<T*>(device_->allocate(bytes));
    device_->fillZero(data_, bytes);
    size_ = n;
    ledger_ = &MemoryLedger::current();
    ledger_->charge(kind_, static_cast<int64_t>(n * sizeof(T)));
  }
  void release() {
    if (data_) {
      ledger_->refund(kind_, static_cast<int64_t>(size_ * sizeof(T)));
      device_->release(data_);
    }
    data_ = nullptr;
    size_ = 0;
    ledger_ = nullptr;
    device_ = nullptr;
  }
  void zero() {
    if (data_) device_->fillZero(data_, static_cast<size_t>(size_) * sizeof(T));
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](int64_t i) { return data_[i]; }
  const T& operator[](int64_t i) const { return data_[i]; }

 private:
  T* data_ = nullptr;
  int64_t size_ = 0;
  MemKind kind_ = MemKind::kOther;
  MemoryLedger* ledger_ = nullptr;
  Device* device_ = nullptr;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_TENSOR_BUFFER_H_
