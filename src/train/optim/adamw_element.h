// One element of an AdamW step, written once for the host loop and the CUDA kernel (CHORUS_TRAIN_HD), so both update a
// parameter with the same operations in the same order.
#ifndef CHORUS_TRAIN_OPTIM_ADAMW_ELEMENT_H_
#define CHORUS_TRAIN_OPTIM_ADAMW_ELEMENT_H_

#include <cmath>

#include "tensor/hd.h"

namespace chorus::train {

// What one step of AdamW needs beside the element's own values, for one piece of the flat buffer (pieces differ in
// `keep`: weight decay applies to matrices only).
struct AdamWScalars {
  float beta1 = 0, beta2 = 0, eps = 0;
  float keep = 1;       // 1 - lr * weight decay, or 1
  float stepSize = 0;   // lr / (1 - beta1^step)
  float bc2Sqrt = 1;    // sqrt(1 - beta2^step)
  float gradScale = 1;  // global-norm clipping
};

// PyTorch's formulation: p *= keep; p -= stepSize * m / (sqrt(v) / bc2Sqrt + eps).
CHORUS_TRAIN_HD void adamwElement(const AdamWScalars& s, float& p, float g, float& m, float& v) {
  const float gr = g * s.gradScale;
  m = s.beta1 * m + (1.0f - s.beta1) * gr;
  v = s.beta2 * v + (1.0f - s.beta2) * gr * gr;
  const float denom = sqrtf(v) / s.bc2Sqrt + s.eps;
  p = p * s.keep - s.stepSize * m / denom;
}

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_OPTIM_ADAMW_ELEMENT_H_
