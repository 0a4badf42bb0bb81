// LayerNorm over the last dimension, as GPT-2 uses it before attention, before the MLP and at the end.
#ifndef CHORUS_TRAIN_MODEL_LAYERNORM_H_
#define CHORUS_TRAIN_MODEL_LAYERNORM_H_

namespace chorus::train {

// inp and out are (N,C); w and b are (C); mean and rstd (N) are saved for the backward pass.
template <typename F>
void layernormForward(F* out, F* mean, F* rstd, const F* inp, const F* w, const F* b, int N, int C);

// dinp (N,C) += the gradient with respect to inp (the residual stream collects it); dw and db (C) are
// overwritten with this pass's gradient.
template <typename F>
void layernormBackward(F* dinp, F* dw, F* db, const F* dout, const F* inp, const F* w, const F* mean, const F* rstd,
                       int N, int C);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_MODEL_LAYERNORM_H_
