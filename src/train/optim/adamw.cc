#include "optim/adamw.h"

#include <cmath>

namespace chorus::train {

TensorMask::TensorMask(const ParamLayout& layout, const std::function<bool(const TensorSpec&)>& include) {
  // Pieces in buffer order; the padding at the end of each unit belongs to no tensor and is excluded.
  int64_t at = 0;
  for (const TensorSpec& t : layout.tensors()) {
    if (t.offset > at) {
      starts_.push_back(at);
      include_.push_back(false);
    }
    starts_.push_back(t.offset);
    include_.push_back(include(t));
    at = t.offset + t.size();
  }
  starts_.push_back(at);
  include_.push_back(false);
}

void adamwStep(const AdamWConfig& cfg, const TensorMask& decay, int64_t step, float lr, float gradScale, int64_t begin,
               int64_t end, float* p, const float* g, float* m, float* v) {
  // PyTorch's formulation: p *= 1 - lr*wd; p -= (lr / bc1) * m / (sqrt(v) / sqrt(bc2) + eps).
  const float bc1 = 1.0f - std::pow(cfg.beta1, static_cast<float>(step));
  const float bc2 = 1.0f - std::pow(cfg.beta2, static_cast<float>(step));
  const float stepSize = lr / bc1;
  const float bc2Sqrt = std::sqrt(bc2);
  const float b1 = cfg.beta1, b2 = cfg.beta2, eps = cfg.eps;
  decay.forEachPiece(begin, end, [&](int64_t a, int64_t b, bool decays) {
    const float keep = decays ? 1.0f - lr * cfg.weightDecay : 1.0f;
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
