// Where a rank's tensors live and what runs the arithmetic on them: the host (OpenBLAS and loops), a CUDA GPU (kernels
// and cuBLAS on a stream, cuda/cuda_device.h), or the CUDA path's kernels emulated on the host
// (device/emulated_device.h, which tests that path without a GPU). Each rank installs its Device for its thread
// (Device::Scope); every Buffer made on that thread lives in the device's memory, and the model, the data-parallel
// engines and the pipeline reach the memory only through the calls below, so the same parallel code trains on any
// device. Communicators on a device's memory order their operations after its computation through the stream calls at
// the end.
#ifndef CHORUS_TRAIN_TENSOR_DEVICE_H_
#define CHORUS_TRAIN_TENSOR_DEVICE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "optim/adamw_element.h"

namespace chorus::train {

template <typename F>
class LayerOps;

class Device {
 public:
  virtual ~Device() = default;

  // "host", "emulated" (the CUDA kernels run on the host) or "cuda:N".
  virtual std::string name() const = 0;
  // The CUDA device whose memory this is, or -1 for host memory (host communicators carry it).
  virtual int cudaIndex() const { return -1; }

  // Memory. allocate returns `bytes` of this device's memory, 64-byte aligned, contents undefined.
  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* p) = 0;
  virtual void fillZero(void* p, size_t bytes) = 0;
  // Within this device's memory, ordered after the computation issued so far.
  virtual void copy(void* dst, const void* src, size_t bytes) = 0;
  // Between host memory and this device's: they return once the copy is complete (toHost after the computation issued
  // before it), so the host may read `dst` or reuse `src` at once.
  virtual void toHost(void* dst, const void* src, size_t bytes) = 0;
  virtual void fromHost(void* dst, const void* src, size_t bytes) = 0;

  // Element-wise work of the data-parallel engines, over n floats of this device's memory.
  virtual void add(float* dst, const float* src, int64_t n) = 0;  // dst += src
  virtual void toBf16(const float* src, uint16_t* dst, int64_t n) = 0;
  virtual void fromBf16(const uint16_t* src, float* dst, int64_t n) = 0;
  virtual void addBf16(float* dst, const uint16_t* src, int64_t n) = 0;  // dst += float(src)
  virtual void adamw(const AdamWScalars& s, float* p, const float* g, float* m, float* v, int64_t n) = 0;
  // The sum of x[i]^2 in double, back on the host.
  virtual double sumSquares(const float* x, int64_t n) = 0;

  // The layers' arithmetic on this device.
  virtual LayerOps<float>& layers() = 0;
  // The best single-precision GEMM rate this device reaches in about budgetMs (what MFU is reported against).
  virtual double gemmPeakGflops(int budgetMs) = 0;

  // Ordering between computation and communication. A device whose kernels run asynchronously (CUDA) gives each
  // communicator a stream of its own; an operation issued on it must first wait for the computation issued so far (it
  // may read what that computation writes). On the host every call here does nothing: the computation has finished by
  // the time the next line runs.
  virtual void* createStream() { return nullptr; }
  virtual void destroyStream(void* /*stream*/) {}
  virtual void streamWaitsForWork(void* /*stream*/) {}
  virtual void synchronizeStream(void* /*stream*/) {}
  virtual bool streamIdle(void* /*stream*/) { return true; }

  // The device buffers made on this thread live on: the rank's, or the host when none was installed.
  static Device& current();
  // The host device (one per process; it holds no state).
  static Device& host();
  // Installs `device` as this thread's for the lifetime of the Scope.
  class Scope {
   public:
    explicit Scope(Device* device);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Device* previous_;
  };
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_TENSOR_DEVICE_H_
