#include "optim/adamw.h"

#include <algorithm>
#include <cmath>

namespace chorus::train {

DecayMask::DecayMask(const ParamLayout& layout) {
  // Pieces in buffer order; the gaps between units (alignment) take no decay (their gradients are zero).
  int64_t at = 0;
  for (const TensorSpec& t : layout.tensors()) {
    if (t.offset > at) {
      starts_.push_back(at);
      decay_.push_back(false);
    }
    starts_.push_back(t.offset);
    decay_.push_back(t.decay);
    at = t.offset + t.size();
  }
  starts_.push_back(at);  // from the end of the last tensor on (ZeRO's padding): no decay
  decay_.push_back(false);
}

template <typename Fn>
void DecayMask::forEachPiece(int64_t begin, int64_t end, Fn f) const {
  auto it = std::upper_bound(starts_.begin(), starts_.end(), begin);
  size_t i = it == starts_.begin() ? 0 : static_cast<size_t>(it - starts_.begin()) - 1;
  int64_t at = begin;
  while (at < end) {
    int64_t pieceEnd = i + 1 < starts_.size() ? starts_[i + 1] : end;
    int64_t stop = std::min(end, pieceEnd);
    if (stop > at) f(at, stop, static_cast<bool>(decay_[i]));
    at = stop;
    ++i;
  }
}

void adamwStep(const AdamWConfig& cfg, const DecayMask& mask, int64_t step, float lr, float gradScale, int64_t begin,
               int64_t end, float* p, const float* g, float* m, float* v) {
  // PyTorch's formulation: p *= 1 - lr*wd; p -= (lr / bc1) * m / (sqrt(v) / sqrt(bc2) + eps).
  const float bc1 = 1.0f - std::pow(cfg.beta1, static_cast<float>(step));
  const float bc2 = 1.0f - std::pow(cfg.beta2, static_cast<float>(step));
  const float stepSize = lr / bc1;
  const float bc2Sqrt = std::sqrt(bc2);
  const float b1 = cfg.beta1, b2 = cfg.beta2, eps = cfg.eps;
  mask.forEachPiece(begin, end, [&](int64_t a, int64_t b, bool decay) {
    const float keep = decay ? 1.0f - lr * cfg.weightDecay : 1.0f;
    for (int64_t j = a - begin; j < b - begin; ++j) {
      float gr = g[j] * gradScale;
      m[j] = b1 * m[j] + (1.0f - b1) * gr;
      v[j] = b2 * v[j] + (1.0f - b2) * gr * gr;
      float denom = std::sqrt(v[j]) / bc2Sqrt + eps;
      p[j] = p[j] * keep - stepSize * m[j] / denom;
    }
  });
}

}  // namespace chorus::train
