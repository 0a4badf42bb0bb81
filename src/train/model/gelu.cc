#include "model/gelu.h"

namespace chorus::train {
namespace {

template <typename F>
inline void geluForwardImpl(F* out, const F* inp, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = geluValue(inp[i]);
}

template <typename F>
inline void geluBackwardImpl(F* dinp, const F* inp, const F* dout, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dinp[i] = dout[i] * geluSlope(inp[i]);
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
