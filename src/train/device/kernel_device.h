// A Device whose arithmetic is the kernels of device/kernels.h and GEMMs through an executor (see kernel_layer_ops.h
// for what Exec provides; for the engines it also gives the stream calls of Device). KernelDevice<CudaExec> is the GPU
// (cuda/cuda_device.cu); KernelDevice<HostExec> runs the same kernels and GEMM calls on the host ("emulated",
// device/emulated_device.cc), which tests that code without a GPU.
#ifndef CHORUS_TRAIN_DEVICE_KERNEL_DEVICE_H_
#define CHORUS_TRAIN_DEVICE_KERNEL_DEVICE_H_

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "device/kernel_layer_ops.h"
#include "device/kernels.h"
#include "tensor/device.h"

namespace chorus::train {

template <typename Exec>
class KernelDevice final : public Device {
 public:
  template <typename... Args>
  explicit KernelDevice(Args&&... args) : x_(std::forward<Args>(args)...), layers_(x_), squares_(x_) {}

  std::string name() const override { return x_.name(); }
  int cudaIndex() const override { return x_.cudaIndex(); }

  void* allocate(size_t bytes) override { return x_.allocate(bytes); }
  void release(void* p) override { x_.release(p); }
  void fillZero(void* p, size_t bytes) override { x_.fillZero(p, bytes); }
  void copy(void* dst, const void* src, size_t bytes) override { x_.copy(dst, src, bytes); }
  void toHost(void* dst, const void* src, size_t bytes) override { x_.toHost(dst, src, bytes); }
  void fromHost(void* dst, const void* src, size_t bytes) override { x_.fromHost(dst, src, bytes); }

  void add(float* dst, const float* src, int64_t n) override { x_.forEach(n, kernels::Add{dst, src}); }
  void toBf16(const float* src, uint16_t* dst, int64_t n) override { x_.forEach(n, kernels::ToBf16{dst, src}); }
  void fromBf16(const uint16_t* src, float* dst, int64_t n) override { x_.forEach(n, kernels::FromBf16{dst, src}); }
  void addBf16(float* dst, const uint16_t* src, int64_t n) override { x_.forEach(n, kernels::AddBf16{dst, src}); }
  void adamw(const AdamWScalars& s, float* p, const float* g, float* m, float* v, int64_t n) override {
    x_.forEach(n, kernels::AdamW{s, p, m, v, g});
  }
  double sumSquares(const float* x, int64_t n) override {
    if (n <= 0) return 0;
    const int64_t chunks = (n + kernels::kSquaresChunk - 1) / kernels::kSquaresChunk;
    double* partial = squares_.get(chunks + 1);
    x_.forEach(chunks, kernels::SquaresPartial{partial, x, n});
    x_.forEach(1, kernels::SumInOrder{partial + chunks, partial, chunks});
    double sum = 0;
    x_.toHost(&sum, partial + chunks, sizeof sum);
    return sum;
  }

  LayerOps<float>& layers() override { return layers_; }

  double gemmPeakGflops(int budgetMs) override {
    // 1024^3 products, the host's measurement (tensor/blas.cc), each waited for.
    const int n = 1024;
    const size_t bytes = sizeof(float) * n * n;
    auto* a = static_cast<float*>(x_.allocate(bytes));
    auto* c = static_cast<float*>(x_.allocate(bytes));
    x_.forEach(static_cast<int64_t>(n) * n, kernels::Fill{a, 0.5f});
    auto product = [&] {
      x_.gemm(rowMajorGemm(false, false, n, n, n, 1.0f, a, n, a, n, 0.0f, c, n));
      x_.synchronize();
    };
    using Clock = std::chrono::steady_clock;
    product();  // warm up
    const auto end = Clock::now() + std::chrono::milliseconds(budgetMs);
    double best = 0;
    do {
      const auto t0 = Clock::now();
      product();
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      best = std::max(best, 2.0 * n * n * n / s / 1e9);
    } while (Clock::now() < end);
    x_.release(a);
    x_.release(c);
    return best;
  }

  void* createStream() override { return x_.createStream(); }
  void destroyStream(void* s) override { x_.destroyStream(s); }
  void streamWaitsForWork(void* s) override { x_.streamWaitsForWork(s); }
  void synchronizeStream(void* s) override { x_.synchronizeStream(s); }
  bool streamIdle(void* s) override { return x_.streamIdle(s); }

 private:
  Exec x_;
  KernelLayerOps<Exec> layers_;
  DeviceScratch<Exec, double> squares_;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_DEVICE_KERNEL_DEVICE_H_
