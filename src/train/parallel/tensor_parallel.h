// Tensor parallelism over a communicator: the model's TensorParallelOps as blocking collectives on the
// tensor-parallel group (the layer after each needs the result at once), and, under sequence parallelism, the
// sum across the group of the gradients of the replicated tensors, which each rank computed from its own rows
// only: a UnitAccess that wraps the data-parallel engine and sums a unit's replicated gradients before the
// engine sees them.
#ifndef CHORUS_TRAIN_PARALLEL_TENSOR_PARALLEL_H_
#define CHORUS_TRAIN_PARALLEL_TENSOR_PARALLEL_H_

#include "comm/comm.h"
#include "model/param_layout.h"
#include "model/tensor_parallel_ops.h"
#include "model/unit_access.h"

namespace chorus::train {

class TensorParallel : public TensorParallelOps<float> {
 public:
  explicit TensorParallel(Comm& group) : group_(group) {}
  void sumActivations(float* x, int64_t n) override { sum(x, n); }
  void sumInputGrads(float* dx, int64_t n) override { sum(dx, n); }
  void max(float* v, int n) override {
    group_.allReduce(v, v, static_cast<size_t>(n), DType::kFloat32, RedOp::kMax).wait();
  }
  void sum(float* v, int n) override { sum(v, static_cast<int64_t>(n)); }
  void allGatherRows(const float* local, float* full, int64_t localElems) override;
  void reduceScatterRows(const float* full, float* local, int64_t localElems) override;

 private:
  void sum(float* v, int64_t n) { group_.allReduce(v, v, static_cast<size_t>(n), DType::kFloat32, RedOp::kSum).wait(); }
  Comm& group_;
};

// Sequence parallelism's gradient sum: forwards everything to `inner`, but before a unit's gradient is
// handed on (gradsDone), sums the gradients of its replicated tensors across the tensor-parallel group.
class SequenceParallelGrads : public UnitAccess<float> {
 public:
  SequenceParallelGrads(UnitAccess<float>& inner, const ParamLayout& layout, Comm& group)
      : inner_(inner), layout_(layout), group_(group) {}
  const float* params(int unit, Pass pass) override { return inner_.params(unit, pass); }
  void releaseParams(int unit, Pass pass) override { inner_.releaseParams(unit, pass); }
  float* grads(int unit) override { return inner_.grads(unit); }
  void gradsDone(int unit) override;

 private:
  UnitAccess<float>& inner_;
  const ParamLayout& layout_;
  Comm& group_;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_PARALLEL_TENSOR_PARALLEL_H_
