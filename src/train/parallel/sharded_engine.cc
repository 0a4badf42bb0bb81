#include "parallel/sharded_engine.h"

#include <algorithm>
#include <stdexcept>

namespace chorus::train {
namespace {
// A bucket being written, one being reduced and the tied embedding's bucket, which backward opens first (the
// head writes its gradient) and closes last.
constexpr size_t kMaxScratch = 3;
// The unit in use, the one prefetched, and the tied embedding kept through forward (and the head's pair).
constexpr size_t kMaxGathered = 4;
}  // namespace

ShardedEngine::ShardedEngine(const DataParallelOptions& opt, const ParamLayout& layout, Comm& dp)
    : DataParallel(opt, layout, dp) {
  params_.resize(opt.zero == 3 ? plan_.shardSize() : layout.size(), MemKind::kParams);
  gshard_.resize(plan_.shardSize(), MemKind::kGrads);
  allocateShardMoments();
  for (const Bucket& b : plan_.buckets()) maxBucket_ = std::max(maxBucket_, b.size);
  for (const UnitSpec& u : layout.units()) maxUnit_ = std::max(maxUnit_, u.size);
  if (opt.zero == 3) {
    if (dp.size() > 1) gatherComm_ = dp.duplicate();
    // The order the model asks for parameters in (gpt_stage.cc), which prefetching follows.
    // (With several chunks, a pipeline schedule moves between them; prefetching follows each chunk's order
    // and a chunk's first unit is gathered when it is asked for.)
    const ModelPart& part = layout.part();
    const bool tied = part.hasEmbedding && part.hasHead && !part.headHasOwnEmbedding;
    if (part.hasEmbedding) order_[0].push_back(layout.embeddingUnit());
    for (const LayerRange& r : part.chunks)
      for (int l = r.first; l < r.last; ++l) order_[0].push_back(layout.blockUnit(l));
    if (part.hasHead) order_[0].push_back(layout.finalUnit());
    if (part.hasHead) order_[1].push_back(layout.finalUnit());
    if (tied) order_[1].push_back(layout.embeddingUnit());
    for (auto r = part.chunks.rbegin(); r != part.chunks.rend(); ++r)
      for (int l = r->last - 1; l >= r->first; --l) order_[1].push_back(layout.blockUnit(l));
  }
}

float* ShardedEngine::shardParams(int b) {
  return opt_.zero == 3 ? params_.data() + plan_.buckets()[b].shardOffset : params_.data() + plan_.ownOffset(b);
}

std::vector<Comm*> ShardedEngine::comms() {
  std::vector<Comm*> out = {&dp_};
  if (gatherComm_) out.push_back(gatherComm_.get());
  return out;
}

// ---- gradients -----------------------------------------------------------------------------------------

ShardedEngine::Scratch& ShardedEngine::scratchFor(int bucket) {
  for (auto& s : scratch_)
    if (s->bucket == bucket && std::find(inFlight_.begin(), inFlight_.end(), s.get()) == inFlight_.end()) return *s;
  for (;;) {
    for (auto& s : scratch_)
      if (s->bucket < 0) {
        s->bucket = bucket;
        return *s;
      }
    if (scratch_.size() < kMaxScratch) {
      auto s = std::make_unique<Scratch>();
      s->grad.resize(maxBucket_, MemKind::kComm);
      s->staging.resize(maxBucket_ / dp_.size(), MemKind::kComm);
      if (opt_.bf16Comm) {
        s->grad16.resize(maxBucket_, MemKind::kComm);
        s->staging16.resize(maxBucket_ / dp_.size(), MemKind::kComm);
      }
      scratch_.push_back(std::move(s));
      continue;
    }
    if (inFlight_.empty()) throw std::logic_error("every gradient scratch buffer is open at once");
    completeOldest();
  }
}

float* ShardedEngine::grads(int unit) {
  const int b = plan_.bucketOfUnit(unit);
  Scratch& s = scratchFor(b);
  return s.grad.data() + (layout_.units()[unit].offset - plan_.buckets()[b].offset);
}

void ShardedEngine::gradsDone(int unit) {
  const int b = completeUnit(unit);
  if (b >= 0) {
    launchReduce(scratchFor(b), bucketMicro_[b] > 0);
    ++bucketMicro_[b];
  }
  dp_.poll();
}

void ShardedEngine::launchReduce(Scratch& s, bool addToShard) {
  const Bucket& k = plan_.buckets()[s.bucket];
  s.addToShard = addToShard;
  if (opt_.bf16Comm) {
    dev_.toBf16(s.grad.data(), s.grad16.data(), k.size);
    s.work = dp_.reduceScatter(s.grad16.data(), s.staging16.data(), k.slice, DType::kBfloat16, RedOp::kSum);
  } else {
    float* dst = s.addToShard ? s.staging.data() : gshard_.data() + k.shardOffset;
    s.work = dp_.reduceScatter(s.grad.data(), dst, k.slice, DType::kFloat32, RedOp::kSum);
  }
  inFlight_.push_back(&s);
}

void ShardedEngine::completeOldest() {
  Scratch& s = *inFlight_.front();
  inFlight_.pop_front();
  s.work.wait();
  const Bucket& k = plan_.buckets()[s.bucket];
  float* dst = gshard_.data() + k.shardOffset;
  if (opt_.bf16Comm) {
    if (s.addToShard) {
      dev_.addBf16(dst, s.staging16.data(), k.slice);
    } else {
      dev_.fromBf16(s.staging16.data(), dst, k.slice);
    }
  } else if (s.addToShard) {
    dev_.add(dst, s.staging.data(), k.slice);
  }
  s.bucket = -1;
}

void ShardedEngine::finishGradients() {
  while (!inFlight_.empty()) completeOldest();
}

// ---- parameters ----------------------------------------------------------------------------------------

ShardedEngine::Gathered* ShardedEngine::findGathered(int unit) {
  for (auto& g : gathered_)
    if (g->unit == unit) return g.get();
  return nullptr;
}

ShardedEngine::Gathered* ShardedEngine::startGather(int unit) {
  Gathered* slot = nullptr;
  for (auto& g : gathered_)
    if (g->users == 0 && (!slot || g->unit < 0)) slot = g.get();
  if ((!slot || slot->unit >= 0) && gathered_.size() < kMaxGathered) {
    gathered_.push_back(std::make_unique<Gathered>());
    gathered_.back()->buf.resize(maxUnit_, MemKind::kComm);
    slot = gathered_.back().get();
  }
  if (!slot) return nullptr;
  slot->work.wait();  // an unused prefetch still writing into the buffer
  const int b = plan_.bucketOfUnit(unit);
  const Bucket& k = plan_.buckets()[b];
  Comm& comm = gatherComm_ ? *gatherComm_ : dp_;
  slot->unit = unit;
  slot->work = comm.allGather(params_.data() + k.shardOffset, slot->buf.data(), k.slice, DType::kFloat32);
  return slot;
}

void ShardedEngine::prefetchAfter(int unit, Pass pass) {
  const std::vector<int>& order = order_[pass == Pass::kForward ? 0 : 1];
  auto it = std::find(order.begin(), order.end(), unit);
  int next = -1;
  if (it != order.end() && it + 1 != order.end())
    next = *(it + 1);
  else if (pass == Pass::kForward && it != order.end() && !evaluating_ && !order_[1].empty())
    next = order_[1][0];
  if (next >= 0 && !findGathered(next)) startGather(next);
}

const float* ShardedEngine::params(int unit, Pass pass) {
  if (opt_.zero == 2) return params_.data() + layout_.units()[unit].offset;
  Gathered* g = findGathered(unit);
  if (!g) g = startGather(unit);
  if (!g) throw std::logic_error("every parameter gather buffer is in use");
  g->work.wait();
  g->users++;
  prefetchAfter(unit, pass);
  if (gatherComm_) gatherComm_->poll();
  return g->buf.data();
}

void ShardedEngine::releaseParams(int unit, Pass) {
  if (opt_.zero == 2) return;
  Gathered* g = findGathered(unit);
  if (g && g->users > 0) g->users--;
}

// ---- the update ----------------------------------------------------------------------------------------

void ShardedEngine::step(const AdamWConfig& cfg, int64_t step, float lr, float gradScale) {
  updateShard(cfg, step, lr, gradScale);
  if (opt_.zero == 3) {
    // Every gathered copy is stale now; the next forward gathers the new values.
    for (auto& g : gathered_) {
      g->work.wait();
      g->unit = -1;
      g->users = 0;
    }
    return;
  }
  if (dp_.size() == 1) return;
  std::vector<Work> gathers;
  for (const Bucket& k : plan_.buckets()) {
    float* p = params_.data() + k.offset;
    gathers.push_back(dp_.allGather(p + dp_.rank() * k.slice, p, k.slice, DType::kFloat32));
  }
  for (Work& w : gathers) w.wait();
}

void ShardedEngine::importFull(const float* params, const float* m, const float* v) {
  if (opt_.zero == 2) dev_.fromHost(params_.data(), params, sizeof(float) * layout_.size());
  for (size_t i = 0; i < plan_.buckets().size(); ++i) {
    const int b = static_cast<int>(i);
    const int64_t at = plan_.ownOffset(b), n = plan_.buckets()[b].slice;
    if (opt_.zero == 3) dev_.fromHost(shardParams(b), params + at, sizeof(float) * n);
    dev_.fromHost(shardM(b), m + at, sizeof(float) * n);
    dev_.fromHost(shardV(b), v + at, sizeof(float) * n);
  }
  for (auto& g : gathered_) g->unit = -1;
}

}  // namespace chorus::train
