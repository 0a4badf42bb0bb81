// How data parallelism groups and shards the flat buffers. A bucket is a run of whole units (a range of the
// flat buffer) whose gradients are communicated together once backward has produced all of them; buckets are
// formed from the end of the buffer, the order backward produces units in. Each bucket is cut into dpSize
// equal slices (units are padded so this is exact): slice r is data-parallel rank r's shard of the bucket,
// the part whose optimizer state it keeps under ZeRO and whose gradient a reduce-scatter leaves with it. A
// rank's whole shard is its slices of every bucket, stored one after another in one flat shard buffer.
#ifndef CHORUS_TRAIN_PARALLEL_BUCKET_PLAN_H_
#define CHORUS_TRAIN_PARALLEL_BUCKET_PLAN_H_

#include <cstdint>
#include <vector>

#include "model/param_layout.h"

namespace chorus::train {

struct Bucket {
  int firstUnit = 0, lastUnit = 0;  // units [firstUnit, lastUnit]
  int64_t offset = 0, size = 0;     // range of the flat buffer
  int64_t slice = 0;                // size / dpSize
  int64_t shardOffset = 0;          // where this bucket's slice starts in a rank's shard buffer
};

class BucketPlan {
 public:
  // Buckets of at least `bucketElems` elements (a bucket never splits a unit, nor spans two chunks of a
  // pipeline stage); 0 makes every unit a bucket.
  BucketPlan(const ParamLayout& layout, int dpSize, int dpRank, int64_t bucketElems);

  const std::vector<Bucket>& buckets() const { return buckets_; }  // in backward order: last units first
  int bucketOfUnit(int unit) const { return bucketOfUnit_[unit]; }
  int dpSize() const { return dpSize_; }
  int dpRank() const { return dpRank_; }
  int64_t shardSize() const { return shardSize_; }
  // Flat offset of this rank's slice of bucket b.
  int64_t ownOffset(int b) const { return buckets_[b].offset + dpRank_ * buckets_[b].slice; }

 private:
  std::vector<Bucket> buckets_;
  std::vector<int> bucketOfUnit_;
  int dpSize_, dpRank_;
  int64_t shardSize_ = 0;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_PARALLEL_BUCKET_PLAN_H_
