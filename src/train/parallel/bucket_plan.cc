#include "parallel/bucket_plan.h"

#include <stdexcept>

namespace chorus::train {

BucketPlan::BucketPlan(const ParamLayout& layout, int dpSize, int dpRank, int64_t bucketElems)
    : dpSize_(dpSize), dpRank_(dpRank) {
  const auto& units = layout.units();
  bucketOfUnit_.assign(units.size(), -1);
  int u = static_cast<int>(units.size()) - 1;
  while (u >= 0) {
    Bucket b;
    b.lastUnit = u;
    int64_t size = 0;
    // A bucket never spans two chunks: a pipeline schedule produces their gradients at different times.
    const int chunk = layout.chunkOfUnit(u);
    do {
      size += units[u].size;
      --u;
    } while (u >= 0 && size < bucketElems && layout.chunkOfUnit(u) == chunk);
    b.firstUnit = u + 1;
    b.offset = units[b.firstUnit].offset;
    b.size = size;
    if (size % dpSize) throw std::logic_error("units are not padded to the data-parallel size");
    b.slice = size / dpSize;
    b.shardOffset = shardSize_;
    shardSize_ += b.slice;
    for (int k = b.firstUnit; k <= b.lastUnit; ++k) bucketOfUnit_[k] = static_cast<int>(buckets_.size());
    buckets_.push_back(b);
  }
}

}  // namespace chorus::train
