#include "parallel/replicated_engine.h"

namespace chorus::train {

ReplicatedEngine::ReplicatedEngine(const DataParallelOptions& opt, const ParamLayout& layout, Comm& dp)
    : DataParallel(opt, layout, dp) {
  params_.resize(layout.size(), MemKind::kParams);
  grads_.resize(layout.size(), MemKind::kGrads);
  if (opt.zero == 0) {
    m_.resize(layout.size(), MemKind::kOptimizer);
    v_.resize(layout.size(), MemKind::kOptimizer);
  } else {
    allocateShardMoments();
  }
  if (opt.bf16Comm && dp.size() > 1) bf16_.resize(layout.size(), MemKind::kComm);
}

float* ReplicatedEngine::shardM(int b) {
  return opt_.zero == 0 ? m_.data() + plan_.ownOffset(b) : DataParallel::shardM(b);
}
float* ReplicatedEngine::shardV(int b) {
  return opt_.zero == 0 ? v_.data() + plan_.ownOffset(b) : DataParallel::shardV(b);
}

const float* ReplicatedEngine::params(int unit, Pass) {
  return params_.data() + layout_.units()[unit].offset;
}

float* ReplicatedEngine::grads(int unit) {
  const UnitSpec& u = layout_.units()[unit];
  if (unitMicro(unit) == 0) return grads_.data() + u.offset;
  // Later micro-steps: backward writes the unit's gradient afresh and gradsDone adds it, so the sum is
  // (g0 + g1) + g2 ..., exactly what the reduction of per-rank gradients computes in the same order.
  Buffer<float>& b = fresh_[unit];
  if (b.size() != u.size) b.resize(u.size, MemKind::kOther);
  return b.data();
}

void ReplicatedEngine::gradsDone(int unit) {
  if (unitMicro(unit) > 0) {
    const UnitSpec& u = layout_.units()[unit];
    dev_.add(grads_.data() + u.offset, fresh_[unit].data(), u.size);
  }
  const int b = completeUnit(unit);
  if (b >= 0 && ++bucketMicro_[b] == micros_ && dp_.size() > 1) launch(b);
  dp_.poll();
}

void ReplicatedEngine::launch(int b) {
  const Bucket& k = plan_.buckets()[b];
  float* g = grads_.data() + k.offset;
  if (!bf16_.empty()) {
    uint16_t* h = bf16_.data() + k.offset;
    dev_.toBf16(g, h, k.size);
    pending_.emplace_back(
        b, opt_.zero == 0 ? dp_.allReduce(h, h, k.size, DType::kBfloat16, RedOp::kSum)
                          : dp_.reduceScatter(h, h + dp_.rank() * k.slice, k.slice, DType::kBfloat16, RedOp::kSum));
  } else {
    pending_.emplace_back(
        b, opt_.zero == 0 ? dp_.allReduce(g, g, k.size, DType::kFloat32, RedOp::kSum)
                          : dp_.reduceScatter(g, g + dp_.rank() * k.slice, k.slice, DType::kFloat32, RedOp::kSum));
  }
}

void ReplicatedEngine::finishGradients() {
  for (auto& [b, work] : pending_) {
    work.wait();
    if (bf16_.empty()) continue;
    const Bucket& k = plan_.buckets()[b];
    // Stage 0 brings back the whole bucket; stage 1 only the slice the reduce-scatter left here.
    int64_t at = opt_.zero == 0 ? k.offset : plan_.ownOffset(b);
    int64_t n = opt_.zero == 0 ? k.size : k.slice;
    dev_.fromBf16(bf16_.data() + at, grads_.data() + at, n);
  }
  pending_.clear();
}

void ReplicatedEngine::step(const AdamWConfig& cfg, int64_t step, float lr, float gradScale) {
  if (opt_.zero == 0) {
    adamwStep(cfg, decay_, step, lr, gradScale, 0, layout_.size(), params_.data(), grads_.data(), m_.data(), v_.data(),
              dev_);
    return;
  }
  updateShard(cfg, step, lr, gradScale);
  if (dp_.size() == 1) return;
  std::vector<Work> gathers;
  for (size_t i = 0; i < plan_.buckets().size(); ++i) {
    const Bucket& k = plan_.buckets()[i];
    float* p = params_.data() + k.offset;
    gathers.push_back(dp_.allGather(p + dp_.rank() * k.slice, p, k.slice, DType::kFloat32));
  }
  for (Work& w : gathers) w.wait();
}

void ReplicatedEngine::importFull(const float* params, const float* m, const float* v) {
  dev_.fromHost(params_.data(), params, sizeof(float) * layout_.size());
  if (opt_.zero == 0) {
    dev_.fromHost(m_.data(), m, sizeof(float) * layout_.size());
    dev_.fromHost(v_.data(), v, sizeof(float) * layout_.size());
    return;
  }
  for (size_t i = 0; i < plan_.buckets().size(); ++i) {
    const int b = static_cast<int>(i);
    const int64_t at = plan_.ownOffset(b), n = plan_.buckets()[b].slice;
    dev_.fromHost(shardM(b), m + at, sizeof(float) * n);
    dev_.fromHost(shardV(b), v + at, sizeof(float) * n);
  }
}

}  // namespace chorus::train
