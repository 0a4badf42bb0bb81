#include "optim/adamw.h"

#include <cmath>

#include "tensor/device.h"

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
               int64_t end, float* p, const float* g, float* m, float* v, Device& device) {
  // PyTorch's formulation (adamw_element.h), the scalars computed once: bc1 = 1 - beta1^step, bc2 = 1 - beta2^step.
  AdamWScalars s;
  s.beta1 = cfg.beta1;
  s.beta2 = cfg.beta2;
  s.eps = cfg.eps;
  s.stepSize = lr / (1.0f - std::pow(cfg.beta1, static_cast<float>(step)));
  s.bc2Sqrt = std::sqrt(1.0f - std::pow(cfg.beta2, static_cast<float>(step)));
  s.gradScale = gradScale;
  decay.forEachPiece(begin, end, [&](int64_t a, int64_t b, bool decays) {
    s.keep = decays ? 1.0f - lr * cfg.weightDecay : 1.0f;
    const int64_t at = a - begin;
    device.adamw(s, p + at, g + at, m + at, v + at, b - a);
  });
}

}  // namespace chorus::train
