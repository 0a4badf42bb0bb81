// ZeRO stages 2 and 3: no rank keeps a full gradient. Backward writes each bucket's gradient into a bucket-
// sized scratch buffer, and once the bucket is complete it is reduce-scattered straight into the owners'
// shards (added to them after the first micro-step) while backward goes on. Stage 3 keeps only its shard of
// the parameters too: each unit is all-gathered into a gather buffer just before its layer runs, forward and
// again backward, the next unit's gather is issued (prefetched) as soon as the current one is taken, and the
// buffer is given back when the layer is done. Gathers run on their own communicator (a second stream), so
// waiting for a gather never waits for a gradient reduction.
#ifndef CHORUS_TRAIN_PARALLEL_SHARDED_ENGINE_H_
#define CHORUS_TRAIN_PARALLEL_SHARDED_ENGINE_H_

#include <deque>
#include <memory>
#include <vector>

#include "parallel/data_parallel.h"

namespace chorus::train {

class ShardedEngine : public DataParallel {
 public:
  ShardedEngine(const DataParallelOptions& opt, const ParamLayout& layout, Comm& dp);

  const float* params(int unit, Pass pass) override;
  void releaseParams(int unit, Pass pass) override;
  float* grads(int unit) override;
  void gradsDone(int unit) override;
  void finishGradients() override;
  void step(const AdamWConfig& cfg, int64_t step, float lr, float gradScale) override;
  void importFull(const float* params, const float* m, const float* v) override;
  std::vector<Comm*> comms() override;

 protected:
  const float* shardGrads(int b) const override { return gshard_.data() + plan_.buckets()[b].shardOffset; }
  float* shardParams(int b) override;

 private:
  // A bucket's gradient on its way to the shards.
  struct Scratch {
    Buffer<float> grad;          // the bucket as backward writes it
    Buffer<uint16_t> grad16;     // ... in bfloat16, with --grad-comm-dtype bf16
    Buffer<float> staging;       // the reduced slice, when it must be added to the shard
    Buffer<uint16_t> staging16;  // ... in bfloat16
    int bucket = -1;             // bucket being written or reduced; -1 when free
    bool addToShard = false;     // the reduction's result is added to the shard rather than stored
    Work work;
  };
  // A unit's parameters gathered from every rank's shard (stage 3).
  struct Gathered {
    Buffer<float> buf;
    int unit = -1;  // whose parameters buf holds (or will once `work` completes); -1 when empty
    int users = 0;  // acquired and not yet released
    Work work;
  };

  Scratch& scratchFor(int bucket);
  void launchReduce(Scratch& s, bool addToShard);
  void completeOldest();
  Gathered* findGathered(int unit);
  Gathered* startGather(int unit);
  void prefetchAfter(int unit, Pass pass);

  std::unique_ptr<Comm> gatherComm_;  // stage 3: gathers, ordered apart from the reductions on dp_
  Buffer<float> params_;              // stage 2: full parameters; stage 3: this rank's shard of them
  Buffer<float> gshard_;
  std::vector<std::unique_ptr<Scratch>> scratch_;
  std::deque<Scratch*> inFlight_;  // reductions in issue order
  std::vector<std::unique_ptr<Gathered>> gathered_;
  std::vector<int> order_[2];  // units in the order forward (0) and backward (1) ask for their parameters
  int64_t maxBucket_ = 0, maxUnit_ = 0;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_PARALLEL_SHARDED_ENGINE_H_
