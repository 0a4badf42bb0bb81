#include "parallel/flash_snapshot.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace chorus::train {

void FlashSnapshot::take(int64_t step, const DataParallel& engine, Comm& dp) {
  const BucketPlan& plan = engine.plan();
  const int64_t n = engine.layout().size();
  std::vector<float> p(static_cast<size_t>(n)), m(p.size()), v(p.size());
  engine.exportShard(p.data(), m.data(), v.data());
  own_.owner = dp.rank();
  own_.ranges.clear();
  own_.values.clear();
  int64_t elems = 0;
  for (size_t b = 0; b < plan.buckets().size(); ++b) {
    own_.ranges.emplace_back(plan.ownOffset(static_cast<int>(b)), plan.buckets()[b].slice);
    elems += plan.buckets()[b].slice;
  }
  own_.values.reserve(static_cast<size_t>(3 * elems));
  for (const auto* src : {&p, &m, &v})
    for (auto [at, k] : own_.ranges) own_.values.insert(own_.values.end(), src->begin() + at, src->begin() + at + k);
  // Every rank's shard has the same ranges' lengths, so the left neighbour's copy is the same size.
  const int D = dp.size(), left = (dp.rank() + D - 1) % D, right = (dp.rank() + 1) % D;
  left_.owner = left;
  left_.ranges.clear();
  for (size_t b = 0; b < plan.buckets().size(); ++b)
    left_.ranges.emplace_back(plan.buckets()[b].offset + left * plan.buckets()[b].slice, plan.buckets()[b].slice);
  left_.values.assign(own_.values.size(), 0.0f);
  if (D > 1) {
    dp.sendRecv({{true, own_.values.data(), own_.values.size(), DType::kFloat32, right},
                 {false, left_.values.data(), left_.values.size(), DType::kFloat32, left}})
        .wait();
  } else {
    left_ = own_;
  }
  step_ = step;
}

void FlashSnapshot::scatterInto(const Copy& c, float* params, float* m, float* v) {
  size_t at = 0;
  for (float* dst : {params, m, v})
    for (auto [off, k] : c.ranges) {
      std::memcpy(dst + off, c.values.data() + at, static_cast<size_t>(k) * sizeof(float));
      at += static_cast<size_t>(k);
    }
}

void FlashSnapshot::rebuild(const std::vector<int>& lost, int64_t layoutSize, Comm& survivors,
                            std::vector<float>& params, std::vector<float>& m, std::vector<float>& v) const {
  if (empty()) throw std::runtime_error("no in-memory snapshot was taken before the failure");
  auto isLost = [&](int r) { return std::find(lost.begin(), lost.end(), r) != lost.end(); };
  if (isLost(own_.owner)) throw std::logic_error("a lost rank cannot rebuild");
  params.assign(static_cast<size_t>(layoutSize), 0.0f);
  m.assign(params.size(), 0.0f);
  v.assign(params.size(), 0.0f);
  scatterInto(own_, params.data(), m.data(), v.data());
  if (isLost(left_.owner)) scatterInto(left_, params.data(), m.data(), v.data());
  // Each element comes from exactly one survivor; the others contribute zeros, so a sum assembles the whole.
  // A count of how many copies each lost rank's shard was found in catches a copy that died too.
  std::vector<double> found(lost.size(), 0.0);
  for (size_t i = 0; i < lost.size(); ++i) found[i] = left_.owner == lost[i] ? 1.0 : 0.0;
  for (std::vector<float>* a : {&params, &m, &v})
    survivors.allReduce(a->data(), a->data(), a->size(), DType::kFloat32, RedOp::kSum).wait();
  if (!found.empty())
    survivors.allReduce(found.data(), found.data(), found.size(), DType::kFloat64, RedOp::kSum).wait();
  for (size_t i = 0; i < lost.size(); ++i)
    if (found[i] < 1.0)
      throw std::runtime_error("the in-memory copy of data-parallel rank " + std::to_string(lost[i]) +
                               "'s shard was held by a rank that failed too");
}

int64_t FlashSnapshot::bytes() const {
  return static_cast<int64_t>((own_.values.size() + left_.values.size()) * sizeof(float));
}

}  // namespace chorus::train
