// ZeRO stages 0 (plain data parallelism, DDP) and 1: every rank keeps the full parameters and the full
// gradient. Buckets are communicated on the last micro-step as soon as backward has produced them (stage 0
// all-reduces; stage 1 reduce-scatters in place, so each rank's slice of the bucket holds the sum), and
// earlier micro-steps accumulate locally. Stage 1 keeps Adam's moments for its shard only and all-gathers the
// updated parameters.
#ifndef CHORUS_TRAIN_PARALLEL_REPLICATED_ENGINE_H_
#define CHORUS_TRAIN_PARALLEL_REPLICATED_ENGINE_H_

#include <map>
#include <vector>

#include "parallel/data_parallel.h"

namespace chorus::train {

class ReplicatedEngine : public DataParallel {
 public:
  ReplicatedEngine(const DataParallelOptions& opt, const ParamLayout& layout, Comm& dp);

  const float* params(int unit, Pass pass) override;
  float* grads(int unit) override;
  void gradsDone(int unit) override;
  void finishGradients() override;
  void step(const AdamWConfig& cfg, int64_t step, float lr, float gradScale) override;
  void importFull(const float* params, const float* m, const float* v) override;

  float* fullParams() { return params_.data(); }

 protected:
  const float* shardGrads(int b) const override { return grads_.data() + plan_.ownOffset(b); }
  float* shardParams(int b) override { return params_.data() + plan_.ownOffset(b); }
  float* shardM(int b) override;
  float* shardV(int b) override;

 private:
  void launch(int b);

  Buffer<float> params_, grads_;
  Buffer<uint16_t> bf16_;                      // the gradient in bfloat16 while it is communicated
  std::map<int, Buffer<float>> fresh_;         // micro-steps after the first: a unit's gradient before it is added
  std::vector<std::pair<int, Work>> pending_;  // bucket, its reduction
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_PARALLEL_REPLICATED_ENGINE_H_
