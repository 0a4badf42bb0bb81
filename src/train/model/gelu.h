// GELU with GPT-2's tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
#ifndef CHORUS_TRAIN_MODEL_GELU_H_
#define CHORUS_TRAIN_MODEL_GELU_H_

#include <cstdint>

#include "tensor/hd.h"
#include "tensor/vec_math.h"

namespace chorus::train {

namespace gelu_detail {
constexpr double kScale = 0.7978845608028654;  // sqrt(2/pi)
constexpr double kCube = 0.044715;

// With e = exp(2u), 0.5 (1 + tanh u) = e / (1 + e) and 0.5 (1 - tanh^2 u) = 2 e / (1 + e)^2: written this way
// nothing cancels where tanh u is near -1 (x below about -4), where 1 + tanh u would lose every digit.
// 2u is clamped to [-80, 80], where these are 0 or 1 to working precision, so e and 1/(1+e) stay normal.
template <typename F>
CHORUS_TRAIN_HD F expTwice(F u) {
  F t = F(2) * u;
  t = t < F(-80) ? F(-80) : (t > F(80) ? F(80) : t);
  return vexp(t);
}
}  // namespace gelu_detail

// gelu(x), one element: the host loops and the CUDA kernels both call it.
template <typename F>
CHORUS_TRAIN_HD F geluValue(F x) {
  using namespace gelu_detail;
  F e = expTwice(F(kScale) * (x + F(kCube) * x * x * x));
  return x * (e / (F(1) + e));
}

// gelu'(x), one element.
template <typename F>
CHORUS_TRAIN_HD F geluSlope(F x) {
  using namespace gelu_detail;
  F e = expTwice(F(kScale) * (x + F(kCube) * x * x * x));
  F s = F(1) / (F(1) + e);
  F du = F(kScale) * (F(1) + F(3 * kCube) * x * x);
  return e * s + F(2) * x * (e * s * s) * du;
}

// out (n) = gelu(inp (n)).
template <typename F>
void geluForward(F* out, const F* inp, int64_t n);

// dinp (n) = dout * gelu'(inp), overwritten.
template <typename F>
void geluBackward(F* dinp, const F* inp, const F* dout, int64_t n);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_MODEL_GELU_H_
