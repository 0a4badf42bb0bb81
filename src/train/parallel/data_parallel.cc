#include "parallel/data_parallel.h"

#include <algorithm>
#include <stdexcept>

#include "parallel/replicated_engine.h"
#include "parallel/sharded_engine.h"

namespace chorus::train {

std::unique_ptr<DataParallel> DataParallel::create(const DataParallelOptions& opt, const ParamLayout& layout,
                                                   Comm& dp) {
  switch (opt.zero) {
    case 0:
    case 1: return std::make_unique<ReplicatedEngine>(opt, layout, dp);
    case 2:
    case 3: return std::make_unique<ShardedEngine>(opt, layout, dp);
  }
  throw std::invalid_argument("--zero must be 0, 1, 2 or 3");
}

DataParallel::DataParallel(const DataParallelOptions& opt, const ParamLayout& layout, Comm& dp)
    : opt_(opt),
      layout_(layout),
      dp_(dp),
      dev_(Device::current()),
      plan_(layout, dp.size(), dp.rank(), opt.zero == 3 ? 0 : opt.bucketElems),
      decay_(decayMask(layout)),
      unitMicro_(layout.units().size()),
      bucketMicro_(plan_.buckets().size()),
      unitsLeft_(plan_.buckets().size()) {
  beginStep(1);
}

void DataParallel::beginStep(int micros) {
  micros_ = micros;
  std::fill(unitMicro_.begin(), unitMicro_.end(), 0);
  std::fill(bucketMicro_.begin(), bucketMicro_.end(), 0);
  for (size_t b = 0; b < plan_.buckets().size(); ++b)
    unitsLeft_[b] = plan_.buckets()[b].lastUnit - plan_.buckets()[b].firstUnit + 1;
}

int DataParallel::completeUnit(int unit) {
  const int b = plan_.bucketOfUnit(unit);
  const Bucket& k = plan_.buckets()[b];
  if (++unitMicro_[unit] > micros_)
    throw std::logic_error("a unit's gradient was produced more often than micro-batches");
  if (--unitsLeft_[b] > 0) return -1;
  unitsLeft_[b] = k.lastUnit - k.firstUnit + 1;
  return b;
}

double DataParallel::shardGradSquares(const TensorMask& count) const {
  double sum = 0;
  for (size_t b = 0; b < plan_.buckets().size(); ++b) {
    const float* g = shardGrads(static_cast<int>(b));
    const int64_t begin = plan_.ownOffset(static_cast<int>(b));
    count.forEachPiece(begin, begin + plan_.buckets()[b].slice, [&](int64_t a, int64_t e, bool counted) {
      if (counted) sum += dev_.sumSquares(g + (a - begin), e - a);
    });
  }
  return sum;
}

void DataParallel::forEachShardGrad(const std::function<void(int64_t, int64_t, float*)>& f) {
  for (size_t b = 0; b < plan_.buckets().size(); ++b)
    f(plan_.ownOffset(static_cast<int>(b)), plan_.buckets()[b].slice, shardGradsMutable(static_cast<int>(b)));
}

void DataParallel::allocateShardMoments() {
  m_.resize(plan_.shardSize(), MemKind::kOptimizer);
  v_.resize(plan_.shardSize(), MemKind::kOptimizer);
}

void DataParallel::updateShard(const AdamWConfig& cfg, int64_t step, float lr, float gradScale) {
  for (size_t i = 0; i < plan_.buckets().size(); ++i) {
    const int b = static_cast<int>(i);
    const int64_t begin = plan_.ownOffset(b), n = plan_.buckets()[b].slice;
    adamwStep(cfg, decay_, step, lr, gradScale, begin, begin + n, shardParams(b), shardGrads(b), shardM(b), shardV(b),
              dev_);
  }
}

void DataParallel::exportShard(float* params, float* m, float* v) const {
  auto* self = const_cast<DataParallel*>(this);
  for (size_t i = 0; i < plan_.buckets().size(); ++i) {
    const int b = static_cast<int>(i);
    const int64_t at = plan_.ownOffset(b), n = plan_.buckets()[b].slice;
    dev_.toHost(params + at, self->shardParams(b), sizeof(float) * n);
    dev_.toHost(m + at, self->shardM(b), sizeof(float) * n);
    dev_.toHost(v + at, self->shardV(b), sizeof(float) * n);
  }
}

void DataParallel::exportGradShard(float* grads) const {
  for (size_t i = 0; i < plan_.buckets().size(); ++i) {
    const int b = static_cast<int>(i);
    dev_.toHost(grads + plan_.ownOffset(b), shardGrads(b), sizeof(float) * plan_.buckets()[b].slice);
  }
}

}  // namespace chorus::train
