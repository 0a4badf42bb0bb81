#include "model/gelu.h"

#include "tensor/vec_math.h"

namespace chorus::train {
namespace {
constexpr double kScale = 0.7978845608028654;  // sqrt(2/pi)
constexpr double kCube = 0.044715;

template <typename F>
inline void geluForwardImpl(F* out, const F* inp, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    F x = inp[i];
    F u = F(kScale) * (x + F(kCube) * x * x * x);
    out[i] = F(0.5) * x * (F(1) + vtanh(u));
  }
}

template <typename F>
inline void geluBackwardImpl(F* dinp, const F* inp, const F* dout, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    F x = inp[i];
    F u = F(kScale) * (x + F(kCube) * x * x * x);
    F th = vtanh(u);
    F du = F(kScale) * (F(1) + F(3 * kCube) * x * x);
    F grad = F(0.5) * (F(1) + th) + F(0.5) * x * (F(1) - th * th) * du;
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
