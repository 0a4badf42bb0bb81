#include "model/gelu.h"

#include "tensor/vec_math.h"

namespace chorus::train {
namespace {
constexpr double kScale = 0.7978845608028654;  // sqrt(2/pi)
constexpr double kCube = 0.044715;

// With e = exp(2u), 0.5 (1 + tanh u) = e / (1 + e) and 0.5 (1 - tanh^2 u) = 2 e / (1 + e)^2: written this way
// nothing cancels where tanh u is near -1 (x below about -4), where 1 + tanh u would lose every digit.
// 2u is clamped to [-80, 80], where these are 0 or 1 to working precision, so e and 1/(1+e) stay normal.
template <typename F>
inline F expTwice(F u) {
  F t = F(2) * u;
  t = t < F(-80) ? F(-80) : (t > F(80) ? F(80) : t);
  return vexp(t);
}

template <typename F>
inline void geluForwardImpl(F* out, const F* inp, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    F x = inp[i];
    F e = expTwice(F(kScale) * (x + F(kCube) * x * x * x));
    out[i] = x * (e / (F(1) + e));
  }
}

template <typename F>
inline void geluBackwardImpl(F* dinp, const F* inp, const F* dout, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    F x = inp[i];
    F e = expTwice(F(kScale) * (x + F(kCube) * x * x * x));
    F s = F(1) / (F(1) + e);
    F du = F(kScale) * (F(1) + F(3 * kCube) * x * x);
    F grad = e * s + F(2) * x * (e * s * s) * du;
    dinp[i] = dout[i] * grad;
  }
}

}  // namespace

template <>
CHORUS_TRAIN_VECTOR_CLONES void geluForward<float>(float* out, const float* inp, int64_t n) {
  geluForwardImpl(out, inp, n);
}
template <>
void geluForward<double>(double* out, const double* inp, int64_t n) {
  geluForwardImpl(out, inp, n);
}
template <>
CHORUS_TRAIN_VECTOR_CLONES void geluBackward<float>(float* dinp, const float* inp, const float* dout, int64_t n) {
  geluBackwardImpl(dinp, inp, dout, n);
}
template <>
void geluBackward<double>(double* dinp, const double* inp, const double* dout, int64_t n) {
  geluBackwardImpl(dinp, inp, dout, n);
}

}  // namespace chorus::train
