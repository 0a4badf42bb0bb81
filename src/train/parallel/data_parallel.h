// Data parallelism and the ZeRO stages, behind one interface the training loop drives. Each engine is the
// model's UnitAccess: it decides where parameters come from (the flat buffer, or gathered per unit under
// ZeRO-3) and what happens to each bucket of gradients once backward has produced it (all-reduced, or
// reduce-scattered so each rank keeps only its shard), overlapping that communication with the rest of
// backward. Gradient accumulation over micro-steps communicates only on the last micro-step, except under
// ZeRO-2 and -3, which keep no full gradient to accumulate into and reduce-scatter every micro-step into the
// shard (as DeepSpeed does).
//
//   stage  parameters   gradients    Adam m, v    per step
//   0      full         full         full         all-reduce each bucket; every rank updates everything
//   1      full         full         shard        reduce-scatter each bucket; update the shard; all-gather
//   2      full         shard        shard        reduce-scatter each bucket as produced; update; all-gather
//   3      shard        shard        shard        all-gather each unit before use (prefetching the next),
//                                                 reduce-scatter its gradient; update the shard
#ifndef CHORUS_TRAIN_PARALLEL_DATA_PARALLEL_H_
#define CHORUS_TRAIN_PARALLEL_DATA_PARALLEL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "comm/comm.h"
#include "model/param_layout.h"
#include "model/unit_access.h"
#include "optim/adamw.h"
#include "parallel/bucket_plan.h"
#include "tensor/buffer.h"
#include "tensor/device.h"

namespace chorus::train {

struct DataParallelOptions {
  int zero = 0;             // ZeRO stage 0..3
  int64_t bucketElems = 0;  // gradient bucket size (stages 0-2); stage 3 reduces unit by unit
  bool bf16Comm = false;    // communicate gradients in bfloat16 (fp32 master weights and accumulation)
};

class DataParallel : public UnitAccess<float> {
 public:
  // `dp` is the data-parallel group; the engine may duplicate it for an independent stream of gathers.
  static std::unique_ptr<DataParallel> create(const DataParallelOptions& opt, const ParamLayout& layout, Comm& dp);
  ~DataParallel() override = default;

  int zeroStage() const { return opt_.zero; }
  // The communicators the engine issues on (for the communication tables and exposed-time accounting).
  virtual std::vector<Comm*> comms() { return {&dp_}; }
  const BucketPlan& plan() const { return plan_; }
  const ParamLayout& layout() const { return layout_; }

  // Before a step of `micros` micro-batches. Every unit's gradient is produced once per micro-batch, in any
  // order of units and micro-batches (a pipeline schedule interleaves them): the first time overwrites, later
  // times add, and the last communicates (stages 0-1; stages 2-3 communicate every time).
  void beginStep(int micros);
  // After the last micro-step's backward: waits for every gradient reduction, so the gradients this rank
  // owns are final.
  virtual void finishGradients() = 0;
  // Sum of squares of the gradient over this rank's shard: summed over the data-parallel group, each element
  // counted once, it is the squared global norm.
  // `count` excludes tensors another rank counts too (copies kept by tensor parallelism, the pipeline's second
  // copy of the tied embedding).
  double shardGradSquares(const TensorMask& count) const;
  // Calls f(flatOffset, n, grad) for each range of this rank's shard of the gradient (after
  // finishGradients), so a caller can combine it with other groups' (the tied embedding's two copies).
  void forEachShardGrad(const std::function<void(int64_t, int64_t, float*)>& f);
  // AdamW over this rank's shard (clipping folded into gradScale), then whatever makes the parameters whole
  // again for the next forward pass.
  virtual void step(const AdamWConfig& cfg, int64_t step, float lr, float gradScale) = 0;
  // Forward-only passes (validation) read parameters through the same access, outside a training step.
  void beginEvaluation() { evaluating_ = true; }
  void endEvaluation() { evaluating_ = false; }

  // Checkpoint support over full flat buffers of the layout (layout().size() elements each, in host memory):
  // export writes this rank's shard of parameters and Adam moments at their flat offsets; import takes what it
  // keeps.
  void exportShard(float* params, float* m, float* v) const;
  // Writes this rank's shard of the (final) gradient at its flat offsets; the rest of `grads` is untouched.
  void exportGradShard(float* grads) const;
  virtual void importFull(const float* params, const float* m, const float* v) = 0;

 protected:
  DataParallel(const DataParallelOptions& opt, const ParamLayout& layout, Comm& dp);

  // Where this rank's shard of bucket b lives: gradient, parameters and Adam moments.
  virtual const float* shardGrads(int b) const = 0;
  float* shardGradsMutable(int b) { return const_cast<float*>(shardGrads(b)); }
  virtual float* shardParams(int b) = 0;
  virtual float* shardM(int b) { return m_.data() + plan_.buckets()[b].shardOffset; }
  virtual float* shardV(int b) { return v_.data() + plan_.buckets()[b].shardOffset; }

  // Adam moments over the shard (stages 1-3) and the update of every slice.
  void allocateShardMoments();
  void updateShard(const AdamWConfig& cfg, int64_t step, float lr, float gradScale);

  // Call from gradsDone: counts the unit's micro-batch and returns the bucket it completes for this
  // micro-batch, or -1 while the bucket waits for more of its units.
  int completeUnit(int unit);
  // Micro-batches of this step whose gradient the unit / the bucket has already produced (before the call to
  // completeUnit that counts the current one).
  int unitMicro(int unit) const { return unitMicro_[unit]; }
  int bucketMicro(int bucket) const { return bucketMicro_[bucket]; }

  DataParallelOptions opt_;
  const ParamLayout& layout_;
  Comm& dp_;
  Device& dev_;  // where the parameters, gradients and moments live (the rank's device when the engine is made)
  BucketPlan plan_;
  TensorMask decay_;
  int micros_ = 1;
  bool evaluating_ = false;
  std::vector<int> unitMicro_;    // per unit: micro-batches whose gradient it has produced this step
  std::vector<int> bucketMicro_;  // per bucket: micro-batches for which all its units have
  std::vector<int> unitsLeft_;    // per bucket: units yet to produce the current micro-batch's gradient
  Buffer<float> m_, v_;           // shard moments (stages 1-3)
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_PARALLEL_DATA_PARALLEL_H_
