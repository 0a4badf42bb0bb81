// How a model stage reaches its parameters and where it writes its gradients, unit by unit (see
// param_layout.h). Data parallelism and the ZeRO stages implement this: plain data parallelism hands out
// ranges of the flat buffers and starts a bucket's all-reduce once backward has produced it; ZeRO-3 gathers a
// unit's parameters just before a layer needs them and frees them after.
#ifndef CHORUS_TRAIN_MODEL_UNIT_ACCESS_H_
#define CHORUS_TRAIN_MODEL_UNIT_ACCESS_H_

#include "model/param_layout.h"

namespace chorus::train {

enum class Pass { kForward, kBackward };

template <typename F>
class UnitAccess {
 public:
  virtual ~UnitAccess() = default;
  // The unit's parameters (layout order), valid until releaseParams(unit, pass).
  virtual const F* params(int unit, Pass pass) = 0;
  virtual void releaseParams(int /*unit*/, Pass /*pass*/) {}
  // Where backward writes the unit's gradient. Every element is overwritten during the backward pass (the
  // tied embedding's rows are written by the head first and then added to by the embedding).
  virtual F* grads(int unit) = 0;
  // Backward has written the whole gradient of `unit`. Units finish from the last to the first.
  virtual void gradsDone(int /*unit*/) {}
};

// Plain flat buffers: params and grads of the whole layout, nothing to gather or reduce. The gradient check
// and single-process runs use it.
template <typename F>
class FlatAccess : public UnitAccess<F> {
 public:
  FlatAccess(const ParamLayout& layout, const F* params, F* grads) : layout_(layout), params_(params), grads_(grads) {}
  const F* params(int unit, Pass) override { return params_ + layout_.units()[unit].offset; }
  F* grads(int unit) override { return grads_ + layout_.units()[unit].offset; }

 private:
  const ParamLayout& layout_;
  const F* params_;
  F* grads_;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_MODEL_UNIT_ACCESS_H_
