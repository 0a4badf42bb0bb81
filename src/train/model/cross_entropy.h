// The head tied to the token embedding and the softmax cross-entropy loss. With tensor parallelism the head
// is vocabulary-parallel (Megatron-LM): each rank computes the logits of its slice of the vocabulary, and the
// row maximum, the sum of exponentials and the target's logit are each reduced across the tensor-parallel
// group, so no rank ever holds a full row of logits.
#ifndef CHORUS_TRAIN_MODEL_CROSS_ENTROPY_H_
#define CHORUS_TRAIN_MODEL_CROSS_ENTROPY_H_

#include <cstdint>

namespace chorus::train {

// Element-wise reductions of n values across the tensor-parallel group (in place). Without tensor
// parallelism pass nullptr: nothing to reduce.
template <typename F>
class VocabReducer {
 public:
  virtual ~VocabReducer() = default;
  virtual void max(F* values, int n) = 0;
  virtual void sum(F* values, int n) = 0;
};

// logits is (N,V) scratch that leaves holding the softmax probabilities of this rank's V vocabulary columns
// [vocabStart, vocabStart+V); x is (N,C); wte is (V,C); targets (N) are token ids; rowMax and rowSum (N) are
// scratch. Returns the sum over the N rows of -log p(target) (the caller divides by the tokens it averages
// over).
template <typename F>
double crossEntropyForward(F* logits, F* rowMax, F* rowSum, const F* x, const F* wte, const int32_t* targets, int N,
                           int C, int vocabStart, int V, VocabReducer<F>* tp);

// From the probabilities left by the forward pass: dlogits = (p - onehot(target)) * gradScale (in place in
// `logits`), dx (N,C) = dlogits * wte (overwritten; a partial sum over the vocabulary with tensor
// parallelism), dwte (V,C) = dlogits^T * x (overwritten, or added when `accumulateWte`).
template <typename F>
void crossEntropyBackward(F* dx, F* dwte, F* logits, const F* x, const F* wte, const int32_t* targets, int N, int C,
                          int vocabStart, int V, F gradScale, bool accumulateWte);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_MODEL_CROSS_ENTROPY_H_
