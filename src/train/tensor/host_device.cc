// The host device: memory from aligned_alloc, the layers of model/ (OpenBLAS), plain loops for the engines.
#include <cstdlib>
#include <cstring>
#include <new>

#include "comm/bf16.h"
#include "model/host_layer_ops.h"
#include "tensor/blas.h"
#include "tensor/device.h"

namespace chorus::train {
namespace {

class HostDevice final : public Device {
 public:
  std::string name() const override { return "host"; }
  void* allocate(size_t bytes) override {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    return p;
  }
  void release(void* p) override { std::free(p); }
  void fillZero(void* p, size_t bytes) override { std::memset(p, 0, bytes); }
  void copy(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void toHost(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void fromHost(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }

  void add(float* dst, const float* src, int64_t n) override {
    for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
  }
  void toBf16(const float* src, uint16_t* dst, int64_t n) override { chorus::train::toBf16(src, dst, n); }
  void fromBf16(const uint16_t* src, float* dst, int64_t n) override { chorus::train::fromBf16(src, dst, n); }
  void addBf16(float* dst, const uint16_t* src, int64_t n) override {
    for (int64_t i = 0; i < n; ++i) dst[i] += bf16ToFloat(src[i]);
  }
  void adamw(const AdamWScalars& s, float* p, const float* g, float* m, float* v, int64_t n) override {
    for (int64_t i = 0; i < n; ++i) adamwElement(s, p[i], g[i], m[i], v[i]);
  }
  double sumSquares(const float* x, int64_t n) override {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
    return sum;
  }
  LayerOps<float>& layers() override { return HostLayerOps<float>::instance(); }
  double gemmPeakGflops(int budgetMs) override { return measureGemmPeakGflops(budgetMs); }
};

thread_local Device* tCurrent = nullptr;

}  // namespace

Device& Device::host() {
  static HostDevice device;
  return device;
}

Device& Device::current() {
  return tCurrent ? *tCurrent : host();
}

Device::Scope::Scope(Device* device) : previous_(tCurrent) {
  tCurrent = device;
}

Device::Scope::~Scope() {
  tCurrent = previous_;
}

}  // namespace chorus::train
