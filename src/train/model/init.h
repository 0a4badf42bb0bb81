// GPT-2's initialisation of a rank's parameters: N(0, 0.02) matrices, the residual projections scaled by
// 1/sqrt(2 * layers), zero biases, unit LayerNorm gains. Every element is a function of (seed, tensor name,
// index in the full tensor), so a rank that holds a slice gets exactly the numbers one process holding the
// whole model has there.
#ifndef CHORUS_TRAIN_MODEL_INIT_H_
#define CHORUS_TRAIN_MODEL_INIT_H_

#include <cstdint>
#include <vector>

#include "model/param_layout.h"

namespace chorus::train {

// The full tensor `spec` names, as one process would initialise it.
template <typename T>
std::vector<T> initialTensor(const TensorSpec& spec, int layers, uint64_t seed);

// Fills `params` (layout.size() elements) with this rank's slices.
template <typename T>
void initParams(const ParamLayout& layout, uint64_t seed, T* params);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_MODEL_INIT_H_
