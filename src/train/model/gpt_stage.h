// One rank's part of the GPT: the transformer blocks of its pipeline stage (all of them without pipeline
// parallelism), the embeddings on the first stage, and the final LayerNorm, tied head and loss on the last,
// each layer cut to the rank's tensor-parallel slice. Forward and backward are written layer by layer over
// the functions in this folder; parameters and gradients are reached through a UnitAccess, so the same code
// serves one process, data parallelism and every ZeRO stage.
//
// Activations of one micro-batch live in a StageActivations: a pipeline schedule keeps several in flight.
#ifndef CHORUS_TRAIN_MODEL_GPT_STAGE_H_
#define CHORUS_TRAIN_MODEL_GPT_STAGE_H_

#include <cstdint>
#include <vector>

#include "model/param_layout.h"
#include "model/tensor_parallel_ops.h"
#include "model/unit_access.h"
#include "tensor/buffer.h"

namespace chorus::train {

// What the forward pass of one micro-batch keeps for its backward pass. B sequences of T tokens, N = B*T
// rows; C the model width; Cl, Hl and Fl this rank's slices of the attention width, heads and MLP width.
template <typename F>
struct StageActivations {
  StageActivations(const ParamLayout& layout, int batch);
  int64_t bytes() const;

  Buffer<int32_t> tokens, targets;  // (N)
  // Per block l of the stage: x[l] is the block's input (x[L] the stage's output); the rest as named.
  std::vector<Buffer<F>> x;                                  // (N,C) each, L+1 of them
  std::vector<Buffer<F>> ln1, ln1Mean, ln1Rstd, qkv, probs;  // (N,C) (N) (N) (N,3Cl) (B,Hl,T,T)
  std::vector<Buffer<F>> atty, xmid, ln2, ln2Mean, ln2Rstd;  // (N,Cl) (N,C) (N,C) (N) (N)
  std::vector<Buffer<F>> fch, fcg;                           // (N,Fl) pre- and post-GELU
  Buffer<F> lnf, lnfMean, lnfRstd, logits, rowMax, rowSum;   // last stage: (N,C) (N) (N) (N,Vl) (N) (N)
  double loss = 0;                                           // summed over the N tokens (last stage)
};

template <typename F>
class GptStage {
 public:
  // tp may be null (no tensor parallelism).
  GptStage(const ParamLayout& layout, int batch, TensorParallelOps<F>* tp);

  // Forward pass of one micro-batch. The first stage embeds acts.tokens; later stages read acts.x[0], which
  // the caller filled with the previous stage's output. The last stage computes the loss into acts.loss
  // (summed over tokens) from acts.targets.
  void forward(StageActivations<F>& acts, UnitAccess<F>& access);

  // Backward pass. On the last stage the loss's gradient is gradScale per token (1 / the tokens the loss is
  // averaged over); on the others `doutput` (N,C) is the gradient of the stage's output. Leaves the gradient
  // of the stage's input in inputGrad() (unless this is the first stage).
  void backward(StageActivations<F>& acts, F gradScale, const F* doutput, UnitAccess<F>& access);
  const F* inputGrad() const { return dres_.data(); }

  const ParamLayout& layout() const { return layout_; }
  int batch() const { return B_; }
  int64_t scratchBytes() const;

 private:
  void blockForward(int l, StageActivations<F>& a, const F* p);
  void blockBackward(int l, StageActivations<F>& a, const F* p, F* g);

  const ParamLayout& layout_;
  TensorParallelOps<F>* tp_;
  int B_, T_, C_, N_, Hl_, hs_, Cl_, Fl_, Vl_;
  // Backward scratch shared by all micro-batches: the residual stream's gradient and per-layer temporaries.
  Buffer<F> dres_, dln_, dqkv_, datty_, dfch_, dfcg_, dscores_;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_MODEL_GPT_STAGE_H_
