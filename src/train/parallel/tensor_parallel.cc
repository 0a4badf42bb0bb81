#include "parallel/tensor_parallel.h"

#include <vector>

namespace chorus::train {

void TensorParallel::allGatherRows(const float* local, float* full, int64_t localElems) {
  group_.allGather(local, full, static_cast<size_t>(localElems), DType::kFloat32).wait();
}

void TensorParallel::reduceScatterRows(const float* full, float* local, int64_t localElems) {
  group_.reduceScatter(full, local, static_cast<size_t>(localElems), DType::kFloat32, RedOp::kSum).wait();
}

void SequenceParallelGrads::gradsDone(int unit) {
  float* g = inner_.grads(unit);
  const int64_t base = layout_.units()[unit].offset;
  // One all-reduce per run of consecutive replicated tensors (a block's two LayerNorms and two biases are
  // three runs).
  int64_t runStart = -1, runEnd = -1;
  auto flush = [&] {
    if (runStart < 0) return;
    float* p = g + (runStart - base);
    group_.allReduce(p, p, static_cast<size_t>(runEnd - runStart), DType::kFloat32, RedOp::kSum).wait();
    runStart = -1;
  };
  for (const TensorSpec& t : layout_.tensors()) {
    if (t.unit != unit) continue;
    if (t.split != Split::kNone) {
      flush();
      continue;
    }
    if (runStart >= 0 && t.offset != runEnd) flush();
    if (runStart < 0) runStart = t.offset;
    runEnd = t.offset + t.size();
  }
  flush();
  inner_.gradsDone(unit);
}

}  // namespace chorus::train
