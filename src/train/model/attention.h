// Causal multi-head self-attention on the output of the QKV projection. Each token's qkv row holds this
// rank's heads of q, then of k, then of v (H heads of hs features each: 3*H*hs values); with tensor
// parallelism H is the local head count.
#ifndef CHORUS_TRAIN_MODEL_ATTENTION_H_
#define CHORUS_TRAIN_MODEL_ATTENTION_H_

namespace chorus::train {

// qkv is (B,T,3*H*hs); out is (B,T,H*hs); probs (B,H,T,T) keeps the softmax for the backward pass (zero
// above the diagonal).
template <typename F>
void attentionForward(F* out, F* probs, const F* qkv, int B, int T, int H, int hs);

// dqkv (B,T,3*H*hs) is overwritten; dscratch is (T,T) of scratch.
template <typename F>
void attentionBackward(F* dqkv, F* dscratch, const F* dout, const F* qkv, const F* probs, int B, int T, int H, int hs);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_MODEL_ATTENTION_H_
