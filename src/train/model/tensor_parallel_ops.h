// The communication a tensor-parallel transformer block needs (Megatron-LM's conjugate operators f and g),
// seen from the model: the model calls these at the boundaries of its parallel regions and the parallel
// layer (parallel/) implements them over the tensor-parallel communicator.
#ifndef CHORUS_TRAIN_MODEL_TENSOR_PARALLEL_OPS_H_
#define CHORUS_TRAIN_MODEL_TENSOR_PARALLEL_OPS_H_

#include <cstdint>

#include "model/cross_entropy.h"

namespace chorus::train {

template <typename F>
class TensorParallelOps : public VocabReducer<F> {
 public:
  // g, forward: after a row-parallel layer (attention projection, second MLP layer, vocabulary-parallel
  // embedding) every rank holds a partial sum of the output; sum it across the group in place.
  virtual void sumActivations(F* x, int64_t n) = 0;
  // f, backward: before a column-parallel layer (QKV, first MLP layer, vocabulary-parallel head) every rank
  // holds a partial sum of the input's gradient; sum it across the group in place.
  virtual void sumInputGrads(F* dx, int64_t n) = 0;
  // Sequence parallelism (rows of the flattened batch cut into tpSize equal parts, part r on rank r):
  // all-gather each rank's `localElems` into `full` (g, forward; the backward of reduceScatterRows), and
  // reduce-scatter partial sums of `full` so each rank keeps the sum of its own part (g-bar, forward; the
  // backward of allGatherRows).
  virtual void allGatherRows(const F* local, F* full, int64_t localElems) = 0;
  virtual void reduceScatterRows(const F* full, F* local, int64_t localElems) = 0;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_MODEL_TENSOR_PARALLEL_OPS_H_
