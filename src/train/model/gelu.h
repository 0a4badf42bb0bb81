// GELU with GPT-2's tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
#ifndef CHORUS_TRAIN_MODEL_GELU_H_
#define CHORUS_TRAIN_MODEL_GELU_H_

#include <cstdint>

namespace chorus::train {

// out (n) = gelu(inp (n)).
template <typename F>
void geluForward(F* out, const F* inp, int64_t n);

// dinp (n) = dout * gelu'(inp), overwritten.
template <typename F>
void geluBackward(F* dinp, const F* inp, const F* dout, int64_t n);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_MODEL_GELU_H_
