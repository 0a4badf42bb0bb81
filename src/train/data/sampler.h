// Which windows of the corpus each rank trains on. A step's global batch is `globalSequences` windows of
// seqLen+1 bytes at offsets that are a function of (seed, step, index in the global batch) only; data-parallel
// rank d's micro-step k takes the consecutive block of `batch` sequences starting at index (k*dp + d)*batch,
// so the ranks' parts are disjoint, cover the global batch, and one process that accumulates the same global
// batch in micro-steps of `batch` sees exactly the same windows. The position in the data is therefore the
// step number, which the checkpoint stores.
#ifndef CHORUS_TRAIN_DATA_SAMPLER_H_
#define CHORUS_TRAIN_DATA_SAMPLER_H_

#include <cstdint>
#include <vector>

namespace chorus::train {

class Sampler {
 public:
  Sampler(const std::vector<uint8_t>& data, int seqLen, uint64_t seed) : data_(data), seqLen_(seqLen), seed_(seed) {}

  // Offset of sequence `index` of step `step`'s global batch.
  int64_t offset(int64_t step, int64_t index) const;

  // Fills tokens and targets (count * seqLen each) with sequences [first, first+count) of step `step`.
  void fill(int64_t step, int64_t first, int count, int32_t* tokens, int32_t* targets) const;

  // Validation: sequence i of the fixed validation set (the same every time it is asked).
  void fillFixed(int64_t first, int count, int32_t* tokens, int32_t* targets) const;

 private:
  void copyWindow(int64_t off, int32_t* tokens, int32_t* targets) const;
  const std::vector<uint8_t>& data_;
  int seqLen_;
  uint64_t seed_;
};

// Index in the global batch of data-parallel rank `dpRank`'s first sequence of micro-step `micro`.
inline int64_t firstSequence(int micro, int dpRank, int dpSize, int batch) {
  return (static_cast<int64_t>(micro) * dpSize + dpRank) * batch;
}

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_DATA_SAMPLER_H_
