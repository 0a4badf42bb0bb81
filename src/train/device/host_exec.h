// The CUDA executor's host stand-in: a kernel launch is a loop over its indices, a GEMM the same column-major call
// through OpenBLAS, memory is host memory and nothing is asynchronous. KernelDevice<HostExec> (the "emulated" device)
// therefore runs, on any machine, the device path's composition of kernels and GEMM arguments exactly as the GPU runs
// them: what it cannot test is the CUDA runtime itself (launch geometry, streams, copies) and cuBLAS.
#ifndef CHORUS_TRAIN_DEVICE_HOST_EXEC_H_
#define CHORUS_TRAIN_DEVICE_HOST_EXEC_H_

#include <cstdint>
#include <string>

#include "device/gemm_args.h"

namespace chorus::train {

class HostExec {
 public:
  std::string name() const { return "emulated"; }
  int cudaIndex() const { return -1; }

  void* allocate(size_t bytes);
  void release(void* p);
  void fillZero(void* p, size_t bytes);
  void copy(void* dst, const void* src, size_t bytes);
  void toHost(void* dst, const void* src, size_t bytes) { copy(dst, src, bytes); }
  void fromHost(void* dst, const void* src, size_t bytes) { copy(dst, src, bytes); }

  template <typename Fn>
  void forEach(int64_t n, const Fn& fn) {
    for (int64_t i = 0; i < n; ++i) fn(i);
  }
  void gemm(const ColMajorGemm& g);
  void synchronize() {}

  void* createStream() { return nullptr; }
  void destroyStream(void* /*stream*/) {}
  void streamWaitsForWork(void* /*stream*/) {}
  void synchronizeStream(void* /*stream*/) {}
  bool streamIdle(void* /*stream*/) { return true; }
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_DEVICE_HOST_EXEC_H_
