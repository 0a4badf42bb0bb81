// One chunk of one rank's part of the GPT: a run of transformer blocks (all of them without pipeline
// parallelism), with the embeddings when the chunk starts the model and the final LayerNorm, tied head and loss
// when it ends it, each layer cut to the rank's tensor-parallel slice. Forward and backward are written layer
// by layer over the functions in this folder; parameters and gradients are reached through a UnitAccess, so
// the same code serves one process, data parallelism and every ZeRO stage.
//
// Tensor parallelism follows Megatron-LM: QKV and the first MLP layer are column-parallel, the attention
// projection and the second MLP layer row-parallel, the embedding and head vocabulary-parallel. With sequence
// parallelism the residual stream and the LayerNorms hold only this rank's rows of the flattened batch
// (Nr = N / tpSize): all-gathers before the column-parallel layers and reduce-scatters after the row-parallel
// ones take the place of the all-reduces, and the gradients of the replicated tensors (LayerNorms, biases of
// row-parallel layers, positions) are partial sums over the rank's rows, which the caller sums across the group.
//
// Activations of one micro-batch live in a StageActivations: a pipeline schedule keeps several in flight. The
// arithmetic goes through LayerOps, so the same stage runs on the host or on a GPU (the activations and
// parameters are then in device memory).
#ifndef CHORUS_TRAIN_MODEL_GPT_STAGE_H_
#define CHORUS_TRAIN_MODEL_GPT_STAGE_H_

#include <cstdint>
#include <vector>

#include "model/layer_ops.h"
#include "model/param_layout.h"
#include "model/tensor_parallel_ops.h"
#include "model/unit_access.h"
#include "tensor/buffer.h"

namespace chorus::train {

// What the forward pass of one micro-batch keeps for its backward pass. B sequences of T tokens, N = B*T
// rows, Nr of them this rank's (N without sequence parallelism); C the model width; Cl, Hl and Fl this rank's
// slices of the attention width, heads and MLP width; L the chunk's blocks.
template <typename F>
struct StageActivations {
  StageActivations(const ParamLayout& layout, int chunk, int batch, bool sequenceParallel);
  int64_t bytes() const;

  Buffer<int32_t> tokens, targets;  // (N)
  // x[l] is block l's input (Nr,C); x[L] is the chunk's output. A later pipeline stage receives x[0].
  std::vector<Buffer<F>> x;
  std::vector<Buffer<F>> ln1, ln1Mean, ln1Rstd, qkv, probs;  // (N,C) (Nr) (Nr) (N,3Cl) (B,Hl,T,T)
  std::vector<Buffer<F>> atty, xmid, ln2, ln2Mean, ln2Rstd;  // (N,Cl) (Nr,C) (N,C) (Nr) (Nr)
  std::vector<Buffer<F>> fch, fcg;                           // (N,Fl) pre- and post-GELU
  Buffer<F> lnf, lnfMean, lnfRstd, logits, rowMax, rowSum;   // end of the model: (N,C) (Nr) (Nr) (N,Vl) (N) (N)
  double loss = 0;                                           // summed over the N tokens (end of the model)
};

template <typename F>
class GptStage {
 public:
  // tp may be null (no tensor parallelism); sequenceParallel needs tp. ops null: the current device's
  // (Device::current(); the host's for double).
  GptStage(const ParamLayout& layout, int chunk, int batch, TensorParallelOps<F>* tp, bool sequenceParallel,
           LayerOps<F>* ops = nullptr);

  // Forward pass of one micro-batch. The chunk that starts the model embeds acts.tokens; others read
  // acts.x[0], which the caller filled with the previous chunk's output. The chunk that ends the model
  // computes the loss into acts.loss (summed over tokens) from acts.targets.
  void forward(StageActivations<F>& acts, UnitAccess<F>& access);

  // Backward pass. At the end of the model the loss's gradient is gradScale per token (1 / the tokens the
  // loss is averaged over); elsewhere `doutput` (Nr,C) is the gradient of the chunk's output. Leaves the
  // gradient of the chunk's input (Nr,C) in inputGrad() (unless the chunk starts the model).
  void backward(StageActivations<F>& acts, F gradScale, const F* doutput, UnitAccess<F>& access);
  const F* inputGrad() const { return dres_.data(); }

  bool startsModel() const { return hasEmb_; }
  bool endsModel() const { return hasHead_; }
  // Elements of the chunk's input, output and their gradients: Nr * C.
  int64_t boundaryElems() const { return static_cast<int64_t>(Nr_) * C_; }
  const ParamLayout& layout() const { return layout_; }
  int64_t scratchBytes() const;

 private:
  void blockForward(int l, StageActivations<F>& a, const F* p);
  void blockBackward(int l, StageActivations<F>& a, const F* p, F* g);
  // LayerNorm of the rank's rows into `full` (N,C): gathered across the group under sequence parallelism.
  void normForColumnParallel(F* full, F* mean, F* rstd, const F* x, const F* w, const F* b);
  // out (Nr,C) = the group's sum of the row-parallel partial product inp * W^T, plus bias.
  void rowParallelForward(F* out, const F* inp, const F* w, const F* bias, int I);
  // The gradient of a row-parallel layer's output, rows of the whole batch: dres_ itself, or gathered.
  const F* fullOutputGrad();
  // From the column-parallel layer's input gradient dln_ (N,C, a partial sum) through the LayerNorm of the
  // rank's rows, added into dres_.
  void normBackward(F* dw, F* db, const F* x, const F* w, const F* mean, const F* rstd);

  const ParamLayout& layout_;
  LayerOps<F>& ops_;
  TensorParallelOps<F>* tp_;
  bool sp_;
  int first_, last_;  // blocks [first_, last_)
  bool hasEmb_, hasHead_, tied_;
  int B_, T_, C_, N_, Nr_, Hl_, hs_, Cl_, Fl_, Vl_;
  int64_t rowOffset_;  // first row of the flattened batch this rank holds (sequence parallelism)
  // Scratch shared by all micro-batches: the residual stream's gradient, per-layer temporaries, and under
  // sequence parallelism the rank's rows before a gather and the whole batch before a reduce-scatter.
  Buffer<F> dres_, dln_, dqkv_, datty_, dfch_, dfcg_, dscores_;
  Buffer<F> rows_, full_;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_MODEL_GPT_STAGE_H_
