// The layers as kernels and GEMMs over an executor `Exec` (cuda/cuda_exec.cuh on a GPU; device/host_exec.h, its
// emulation on the host): the composition of each layer is written once here, and only how a kernel is launched and a
// GEMM is called differs between the two. The kernels are those of device/kernels.h; the GEMMs are the host layers' own
// (model/*.cc), passed through rowMajorGemm.
//
// Exec provides: allocate/release/fillZero/copy/toHost (device memory), forEach(n, functor) (runs functor(i) for every
// i in [0, n), in any order, after the work issued before it), and gemm(ColMajorGemm).
#ifndef CHORUS_TRAIN_DEVICE_KERNEL_LAYER_OPS_H_
#define CHORUS_TRAIN_DEVICE_KERNEL_LAYER_OPS_H_

#include <cmath>
#include <cstdint>

#include "device/gemm_args.h"
#include "device/kernels.h"
#include "model/layer_ops.h"

namespace chorus::train {

// Device memory an operation needs for itself, kept between calls and grown when too small.
template <typename Exec, typename T>
class DeviceScratch {
 public:
  explicit DeviceScratch(Exec& exec) : exec_(exec) {}
  ~DeviceScratch() {
    if (p_) exec_.release(p_);
  }
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  T* get(int64_t n) {
    if (n > n_) {
      if (p_) exec_.release(p_);
      p_ = static_cast<T*>(exec_.allocate(static_cast<size_t>(n) * sizeof(T)));
      n_ = n;
    }
    return p_;
  }

 private:
  Exec& exec_;
  T* p_ = nullptr;
  int64_t n_ = 0;
};

template <typename Exec>
class KernelLayerOps final : public LayerOps<float> {
 public:
  explicit KernelLayerOps(Exec& exec) : x_(exec), target_(exec), rowLoss_(exec) {}

  // ---- linear ----
  void linearForward(float* out, const float* inp, const float* w, const float* b, int N, int I, int O) override {
    if (b) x_.forEach(static_cast<int64_t>(N) * O, kernels::SetRowVector{out, b, O});
    // out (N,O) = inp (N,I) * w (O,I)^T (+ the bias already there)
    x_.gemm(rowMajorGemm(false, true, N, O, I, 1.0f, inp, I, w, I, b ? 1.0f : 0.0f, out, O));
  }
  void linearBackward(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w, int N,
                      int I, int O, bool accumulateInput) override {
    // dinp (N,I) = dout (N,O) * w (O,I); dw (O,I) = dout^T (O,N) * inp (N,I)
    if (dinp) x_.gemm(rowMajorGemm(false, false, N, I, O, 1.0f, dout, O, w, I, accumulateInput ? 1.0f : 0.0f, dinp, I));
    x_.gemm(rowMajorGemm(true, false, O, I, N, 1.0f, dout, O, inp, I, 0.0f, dw, I));
    if (db) columnSum(db, dout, N, O);
  }
  void columnSum(float* db, const float* dout, int N, int O) override {
    x_.forEach(O, kernels::ColumnSum{db, dout, N, O});
  }

  // ---- LayerNorm ----
  void layernormForward(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b, int N,
                        int C) override {
    x_.forEach(N, kernels::LayernormRows{out, mean, rstd, inp, w, b, C});
  }
  void layernormBackward(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w,
                         const float* mean, const float* rstd, int N, int C) override {
    x_.forEach(C, kernels::LayernormBackwardParams{dw, db, dout, inp, mean, rstd, N, C});
    x_.forEach(N, kernels::LayernormBackwardRows{dinp, dout, inp, w, mean, rstd, C});
  }

  // ---- attention: per sequence, one batched GEMM over the heads (head h's q, k, v start h*hs columns into the
  // (T, 3*H*hs) rows of qkv; its (T,T) block of probabilities h*T*T into the sequence's) ----
  int64_t attentionScratch(int B, int T, int H) const override { return static_cast<int64_t>(B) * H * T * T; }
  void attentionForward(float* out, float* probs, const float* qkv, int B, int T, int H, int hs) override {
    const int C = H * hs, ld = 3 * C;
    const int64_t tt = static_cast<int64_t>(T) * T;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
    for (int b = 0; b < B; ++b) {
      const float* q = qkv + static_cast<int64_t>(b) * T * ld;
      float* p = probs + static_cast<int64_t>(b) * H * tt;
      // p (T,T) = scale * q (T,hs) * k^T (hs,T), per head
      x_.gemm(rowMajorGemm(false, true, T, T, hs, scale, q, ld, q + C, ld, 0.0f, p, T, H, hs, hs, tt));
    }
    x_.forEach(static_cast<int64_t>(B) * H * T, kernels::CausalSoftmaxRows{probs, T});
    for (int b = 0; b < B; ++b) {
      const float* v = qkv + static_cast<int64_t>(b) * T * ld + 2 * C;
      // out (T,hs) = p (T,T) * v (T,hs), into the head's columns of out (T, C)
      x_.gemm(rowMajorGemm(false, false, T, hs, T, 1.0f, probs + static_cast<int64_t>(b) * H * tt, T, v, ld, 0.0f,
                           out + static_cast<int64_t>(b) * T * C, C, H, tt, hs, hs));
    }
  }
  void attentionBackward(float* dqkv, float* dscratch, const float* dout, const float* qkv, const float* probs, int B,
                         int T, int H, int hs) override {
    const int C = H * hs, ld = 3 * C;
    const int64_t tt = static_cast<int64_t>(T) * T;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
    for (int b = 0; b < B; ++b) {
      const float* q = qkv + static_cast<int64_t>(b) * T * ld;
      const float* p = probs + static_cast<int64_t>(b) * H * tt;
      const float* dO = dout + static_cast<int64_t>(b) * T * C;
      float* dq = dqkv + static_cast<int64_t>(b) * T * ld;
      float* dp = dscratch + static_cast<int64_t>(b) * H * tt;
      // dv (T,hs) = p^T * dout; dp (T,T) = dout * v^T
      x_.gemm(rowMajorGemm(true, false, T, hs, T, 1.0f, p, T, dO, C, 0.0f, dq + 2 * C, ld, H, tt, hs, hs));
      x_.gemm(rowMajorGemm(false, true, T, T, hs, 1.0f, dO, C, q + 2 * C, ld, 0.0f, dp, T, H, hs, hs, tt));
    }
    x_.forEach(static_cast<int64_t>(B) * H * T, kernels::CausalSoftmaxBackwardRows{dscratch, probs, T});
    for (int b = 0; b < B; ++b) {
      const float* q = qkv + static_cast<int64_t>(b) * T * ld;
      const float* ds = dscratch + static_cast<int64_t>(b) * H * tt;
      float* dq = dqkv + static_cast<int64_t>(b) * T * ld;
      // dq = scale * ds * k; dk = scale * ds^T * q
      x_.gemm(rowMajorGemm(false, false, T, hs, T, scale, ds, T, q + C, ld, 0.0f, dq, ld, H, tt, hs, hs));
      x_.gemm(rowMajorGemm(true, false, T, hs, T, scale, ds, T, q, ld, 0.0f, dq + C, ld, H, tt, hs, hs));
    }
  }

  // ---- GELU ----
  void geluForward(float* out, const float* inp, int64_t n) override { x_.forEach(n, kernels::GeluForward{out, inp}); }
  void geluBackward(float* dinp, const float* inp, const float* dout, int64_t n) override {
    x_.forEach(n, kernels::GeluBackward{dinp, inp, dout});
  }

  // ---- embeddings ----
  void embeddingForward(float* out, const int32_t* tokens, const float* wte, int vocabStart, int vocabLocal,
                        const float* wpe, int B, int T, int C) override {
    x_.forEach(static_cast<int64_t>(B) * T * C,
               kernels::EmbeddingForward{out, tokens, wte, wpe, vocabStart, vocabLocal, T, C});
  }
  void addPositions(float* out, const float* wpe, int B, int T, int C) override {
    addPositionRows(out, wpe, 0, B * T, T, C);
  }
  void addPositionRows(float* out, const float* wpe, int64_t firstRow, int R, int T, int C) override {
    x_.forEach(static_cast<int64_t>(R) * C, kernels::AddPositionRows{out, wpe, firstRow, T, C});
  }
  void positionGradRows(float* dwpe, const float* dout, int64_t firstRow, int R, int T, int C) override {
    x_.forEach(static_cast<int64_t>(T) * C, kernels::PositionGradRows{dwpe, dout, firstRow, R, T, C});
  }
  void embeddingBackward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int vocabStart,
                         int vocabLocal, int B, int T, int C, bool accumulate) override {
    x_.forEach(static_cast<int64_t>(vocabLocal) * C,
               kernels::EmbeddingBackwardWte{dwte, dout, tokens, vocabStart, B * T, C, accumulate});
    if (dwpe) x_.forEach(static_cast<int64_t>(T) * C, kernels::EmbeddingBackwardWpe{dwpe, dout, B, T, C});
  }

  // ---- head and loss ----
  double crossEntropyForward(float* logits, float* rowMax, float* rowSum, const float* x, const float* wte,
                             const int32_t* targets, int N, int C, int vocabStart, int V,
                             VocabReducer<float>* tp) override {
    // logits (N,V) = x (N,C) * wte (V,C)^T
    x_.gemm(rowMajorGemm(false, true, N, V, C, 1.0f, x, C, wte, C, 0.0f, logits, V));
    x_.forEach(N, kernels::RowMax{rowMax, logits, V});
    if (tp) tp->max(rowMax, N);
    float* target = target_.get(N);
    x_.forEach(N, kernels::ExpRows{logits, rowSum, target, rowMax, targets, vocabStart, V});
    if (tp) {
      tp->sum(rowSum, N);
      tp->sum(target, N);
    }
    double* rowLoss = rowLoss_.get(N + 1);
    x_.forEach(N, kernels::NormalizeRows{logits, rowLoss, rowSum, target, V});
    x_.forEach(1, kernels::SumInOrder{rowLoss + N, rowLoss, N});
    double loss = 0;
    x_.toHost(&loss, rowLoss + N, sizeof loss);
    return loss;
  }
  void crossEntropyBackward(float* dx, float* dwte, float* logits, const float* x, const float* wte,
                            const int32_t* targets, int N, int C, int vocabStart, int V, float gradScale,
                            bool accumulateWte) override {
    x_.forEach(N, kernels::LossGradRows{logits, targets, vocabStart, V, gradScale});
    // dx (N,C) = dlogits (N,V) * wte (V,C); dwte (V,C) = dlogits^T (V,N) * x (N,C)
    x_.gemm(rowMajorGemm(false, false, N, C, V, 1.0f, logits, V, wte, C, 0.0f, dx, C));
    x_.gemm(rowMajorGemm(true, false, V, C, N, 1.0f, logits, V, x, C, accumulateWte ? 1.0f : 0.0f, dwte, C));
  }

  // ---- glue ----
  void add(float* dst, const float* src, int64_t n) override { x_.forEach(n, kernels::Add{dst, src}); }
  void addBias(float* x, const float* bias, int R, int C) override {
    x_.forEach(static_cast<int64_t>(R) * C, kernels::AddRowVector{x, bias, C});
  }
  void copy(float* dst, const float* src, int64_t n) override {
    x_.copy(dst, src, static_cast<size_t>(n) * sizeof(float));
  }

 private:
  Exec& x_;
  DeviceScratch<Exec, float> target_;
  DeviceScratch<Exec, double> rowLoss_;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_DEVICE_KERNEL_LAYER_OPS_H_
