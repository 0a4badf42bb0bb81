// AdamW (decoupled weight decay) over a range of the flat parameter buffer, computed exactly as PyTorch's
// torch.optim.AdamW does it, so a run can be compared with PyTorch step by step. Under ZeRO each rank updates
// only its shard: the range is the shard, and the moments it keeps cover only that range.
#ifndef CHORUS_TRAIN_OPTIM_ADAMW_H_
#define CHORUS_TRAIN_OPTIM_ADAMW_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "model/param_layout.h"
#include "optim/adamw_element.h"

namespace chorus::train {

class Device;

struct AdamWConfig {
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weightDecay = 0.1f;  // applied to the tensors the layout marks `decay`
};

// The ranges of the flat buffer whose tensors satisfy a predicate: the tensors that take weight decay, or
// those that count towards the global gradient norm on this rank.
class TensorMask {
 public:
  TensorMask(const ParamLayout& layout, const std::function<bool(const TensorSpec&)>& include);
  // Calls f(begin, end, included) for consecutive pieces that cover [begin, end).
  template <typename Fn>
  void forEachPiece(int64_t begin, int64_t end, Fn f) const;

 private:
  std::vector<int64_t> starts_;  // sorted starts of pieces; piece i is [starts_[i], starts_[i+1])
  std::vector<bool> include_;
};

// Weight decay applies to the tensors the layout marks `decay`.
inline TensorMask decayMask(const ParamLayout& layout) {
  return TensorMask(layout, [](const TensorSpec& t) { return t.decay; });
}

template <typename Fn>
void TensorMask::forEachPiece(int64_t begin, int64_t end, Fn f) const {
  auto it = std::upper_bound(starts_.begin(), starts_.end(), begin);
  size_t i = it == starts_.begin() ? 0 : static_cast<size_t>(it - starts_.begin()) - 1;
  int64_t at = begin;
  while (at < end) {
    int64_t pieceEnd = i + 1 < starts_.size() ? starts_[i + 1] : end;
    int64_t stop = std::min(end, pieceEnd);
    if (stop > at) f(at, stop, static_cast<bool>(include_[i]));
    at = stop;
    ++i;
  }
}

// One AdamW step (step counts from 1) of elements [begin, end) of the flat buffer: p, m and v hold those
// elements (p[0] is element `begin`), g their gradients, multiplied by gradScale first (global-norm clipping).
// The arrays are in `device`'s memory, which runs the update.
void adamwStep(const AdamWConfig& cfg, const TensorMask& decay, int64_t step, float lr, float gradScale, int64_t begin,
               int64_t end, float* p, const float* g, float* m, float* v, Device& device);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_OPTIM_ADAMW_H_
