// The layers of this folder as LayerOps: the host's arithmetic (OpenBLAS GEMMs, vectorised loops), in float for
// training and in double for the finite-difference gradient check.
#ifndef CHORUS_TRAIN_MODEL_HOST_LAYER_OPS_H_
#define CHORUS_TRAIN_MODEL_HOST_LAYER_OPS_H_

#include "model/layer_ops.h"

namespace chorus::train {

template <typename F>
class HostLayerOps final : public LayerOps<F> {
 public:
  // The one instance (it holds no state).
  static HostLayerOps& instance();

  void linearForward(F* out, const F* inp, const F* w, const F* b, int N, int I, int O) override;
  void linearBackward(F* dinp, F* dw, F* db, const F* dout, const F* inp, const F* w, int N, int I, int O,
                      bool accumulateInput) override;
  void columnSum(F* db, const F* dout, int N, int O) override;
  void layernormForward(F* out, F* mean, F* rstd, const F* inp, const F* w, const F* b, int N, int C) override;
  void layernormBackward(F* dinp, F* dw, F* db, const F* dout, const F* inp, const F* w, const F* mean, const F* rstd,
                         int N, int C) override;
  int64_t attentionScratch(int B, int T, int H) const override;
  void attentionForward(F* out, F* probs, const F* qkv, int B, int T, int H, int hs) override;
  void attentionBackward(F* dqkv, F* dscratch, const F* dout, const F* qkv, const F* probs, int B, int T, int H,
                         int hs) override;
  void geluForward(F* out, const F* inp, int64_t n) override;
  void geluBackward(F* dinp, const F* inp, const F* dout, int64_t n) override;
  void embeddingForward(F* out, const int32_t* tokens, const F* wte, int vocabStart, int vocabLocal, const F* wpe,
                        int B, int T, int C) override;
  void addPositions(F* out, const F* wpe, int B, int T, int C) override;
  void addPositionRows(F* out, const F* wpe, int64_t firstRow, int R, int T, int C) override;
  void positionGradRows(F* dwpe, const F* dout, int64_t firstRow, int R, int T, int C) override;
  void embeddingBackward(F* dwte, F* dwpe, const F* dout, const int32_t* tokens, int vocabStart, int vocabLocal, int B,
                         int T, int C, bool accumulate) override;
  double crossEntropyForward(F* logits, F* rowMax, F* rowSum, const F* x, const F* wte, const int32_t* targets, int N,
                             int C, int vocabStart, int V, VocabReducer<F>* tp) override;
  void crossEntropyBackward(F* dx, F* dwte, F* logits, const F* x, const F* wte, const int32_t* targets, int N, int C,
                            int vocabStart, int V, F gradScale, bool accumulateWte) override;
  void add(F* dst, const F* src, int64_t n) override;
  void addBias(F* x, const F* bias, int R, int C) override;
  void copy(F* dst, const F* src, int64_t n) override;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_MODEL_HOST_LAYER_OPS_H_
