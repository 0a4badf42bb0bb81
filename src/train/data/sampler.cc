#include "data/sampler.h"

#include "tensor/rng.h"

namespace chorus::train {

int64_t Sampler::offset(int64_t step, int64_t index) const {
  const uint64_t windows = data_.size() - static_cast<uint64_t>(seqLen_) - 1;
  return static_cast<int64_t>(mix64(hashCombine(hashCombine(seed_, static_cast<uint64_t>(step)), index)) % windows);
}

void Sampler::copyWindow(int64_t off, int32_t* tokens, int32_t* targets) const {
  for (int t = 0; t < seqLen_; ++t) {
    tokens[t] = data_[off + t];
    targets[t] = data_[off + t + 1];
  }
}

void Sampler::fill(int64_t step, int64_t first, int count, int32_t* tokens, int32_t* targets) const {
  for (int i = 0; i < count; ++i)
    copyWindow(offset(step, first + i), tokens + static_cast<int64_t>(i) * seqLen_,
               targets + static_cast<int64_t>(i) * seqLen_);
}

void Sampler::fillFixed(int64_t first, int count, int32_t* tokens, int32_t* targets) const {
  // The validation set is "step -1" of the sampler: fixed windows, independent of training's steps.
  fill(-1, first, count, tokens, targets);
}

}  // namespace chorus::train
