// The arithmetic of the model's layers behind one interface, so that one GptStage runs them wherever the rank's tensors
// live: on the host (the OpenBLAS layers of this folder, in float and, for the gradient check, double;
// host_layer_ops.h), or as CUDA kernels and cuBLAS GEMMs on a GPU (device/kernel_layer_ops.h over cuda/cuda_exec.cuh).
// Every pointer is in the memory of the device that runs the operation; shapes and meanings are those of the layer
// headers named beside each group.
#ifndef CHORUS_TRAIN_MODEL_LAYER_OPS_H_
#define CHORUS_TRAIN_MODEL_LAYER_OPS_H_

#include <cstdint>

#include "model/cross_entropy.h"

namespace chorus::train {

template <typename F>
class LayerOps {
 public:
  virtual ~LayerOps() = default;

  // linear.h
  virtual void linearForward(F* out, const F* inp, const F* w, const F* b, int N, int I, int O) = 0;
  virtual void linearBackward(F* dinp, F* dw, F* db, const F* dout, const F* inp, const F* w, int N, int I, int O,
                              bool accumulateInput) = 0;
  virtual void columnSum(F* db, const F* dout, int N, int O) = 0;
  // layernorm.h
  virtual void layernormForward(F* out, F* mean, F* rstd, const F* inp, const F* w, const F* b, int N, int C) = 0;
  virtual void layernormBackward(F* dinp, F* dw, F* db, const F* dout, const F* inp, const F* w, const F* mean,
                                 const F* rstd, int N, int C) = 0;
  // attention.h; attentionBackward's dscratch holds attentionScratch(B, T, H) elements.
  virtual int64_t attentionScratch(int B, int T, int H) const = 0;
  virtual void attentionForward(F* out, F* probs, const F* qkv, int B, int T, int H, int hs) = 0;
  virtual void attentionBackward(F* dqkv, F* dscratch, const F* dout, const F* qkv, const F* probs, int B, int T, int H,
                                 int hs) = 0;
  // gelu.h
  virtual void geluForward(F* out, const F* inp, int64_t n) = 0;
  virtual void geluBackward(F* dinp, const F* inp, const F* dout, int64_t n) = 0;
  // embedding.h
  virtual void embeddingForward(F* out, const int32_t* tokens, const F* wte, int vocabStart, int vocabLocal,
                                const F* wpe, int B, int T, int C) = 0;
  virtual void addPositions(F* out, const F* wpe, int B, int T, int C) = 0;
  virtual void addPositionRows(F* out, const F* wpe, int64_t firstRow, int R, int T, int C) = 0;
  virtual void positionGradRows(F* dwpe, const F* dout, int64_t firstRow, int R, int T, int C) = 0;
  virtual void embeddingBackward(F* dwte, F* dwpe, const F* dout, const int32_t* tokens, int vocabStart, int vocabLocal,
                                 int B, int T, int C, bool accumulate) = 0;
  // cross_entropy.h (the loss comes back to the host)
  virtual double crossEntropyForward(F* logits, F* rowMax, F* rowSum, const F* x, const F* wte, const int32_t* targets,
                                     int N, int C, int vocabStart, int V, VocabReducer<F>* tp) = 0;
  virtual void crossEntropyBackward(F* dx, F* dwte, F* logits, const F* x, const F* wte, const int32_t* targets, int N,
                                    int C, int vocabStart, int V, F gradScale, bool accumulateWte) = 0;

  // The residual stream's glue: dst (n) += src (n); x (R,C) += bias (C) on every row; dst (n) = src (n).
  virtual void add(F* dst, const F* src, int64_t n) = 0;
  virtual void addBias(F* x, const F* bias, int R, int C) = 0;
  virtual void copy(F* dst, const F* src, int64_t n) = 0;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_MODEL_LAYER_OPS_H_
