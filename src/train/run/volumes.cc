#include "run/volumes.h"

#include <string>

namespace chorus::train {

std::vector<ExpectedVolume> expectedVolumes(const VolumeInputs& in) {
  std::vector<ExpectedVolume> out;
  const double bsh = static_cast<double>(in.batch) * in.model.seqLen * in.model.dModel * sizeof(float);
  const int t = in.part.tpSize, L = in.part.localLayers(), M = in.micros;
  const bool first = in.part.hasEmbedding, last = in.part.hasHead;
  if (t > 1) {
    // Per micro-batch: 4 per block; the vocabulary-parallel embedding (forward) and head (backward) one more
    // each. The cross-entropy's three reductions of one value per token are a few KiB and not counted.
    const double ends = (first ? 1 : 0) + (last ? 1 : 0);
    if (!in.sequenceParallel) {
      out.push_back({"tensor-parallel", CollKind::kAllReduce, M * (4.0 * L + ends) * bsh,
                     "4 x layers x b*s*h per micro-batch (+ embedding, head)"});
    } else {
      out.push_back({"tensor-parallel", CollKind::kAllGather, M * (4.0 * L + ends) * bsh,
                     "sequence parallel: 4 x layers x b*s*h all-gathered (+ embedding, head)"});
      out.push_back({"tensor-parallel", CollKind::kReduceScatter, M * (4.0 * L + ends) * bsh,
                     "sequence parallel: 4 x layers x b*s*h reduce-scattered (+ embedding, head)"});
    }
  }
  if (in.stages > 1) {
    const double boundary = in.sequenceParallel ? bsh / t : bsh;
    const int chunks = static_cast<int>(in.part.chunks.size());
    const int outAct = chunks - (last ? 1 : 0), outGrad = chunks - (first ? 1 : 0);
    if (outAct > 0)
      out.push_back({"pipeline activations out", CollKind::kSendRecv, M * static_cast<double>(outAct) * boundary,
                     "b*s*h per micro-batch per boundary (forward)"});
    if (outGrad > 0)
      out.push_back({"pipeline gradients out", CollKind::kSendRecv, M * static_cast<double>(outGrad) * boundary,
                     "b*s*h per micro-batch per boundary (backward)"});
    if (first || last) {
      const double wte = static_cast<double>(in.model.vocab / t) * in.model.dModel * sizeof(float);
      out.push_back({"tied-embedding", CollKind::kAllReduce, wte, "the embedding's gradient, once per step"});
    }
  }
  if (in.dp > 1) {
    const double grad = static_cast<double>(in.psi) * (in.bf16 ? 2 : 4), param = static_cast<double>(in.psi) * 4;
    switch (in.zero) {
      case 0:
        out.push_back({"data-parallel", CollKind::kAllReduce, grad, "the gradient, P elements, once per step"});
        break;
      case 1:
        out.push_back({"data-parallel", CollKind::kReduceScatter, grad, "the gradient, P elements, once per step"});
        out.push_back({"data-parallel", CollKind::kAllGather, param, "the updated parameters, P elements"});
        break;
      case 2:
        out.push_back({"data-parallel", CollKind::kReduceScatter, M * grad, "the gradient every micro-batch: M x P"});
        out.push_back({"data-parallel", CollKind::kAllGather, param, "the updated parameters, P elements"});
        break;
      default:
        out.push_back({"data-parallel", CollKind::kReduceScatter, M * grad, "the gradient every micro-batch: M x P"});
        out.push_back({"parameter-gather", CollKind::kAllGather, 2.0 * M * param,
                       "each unit before forward and backward: 2 x M x P (less what stays cached)"});
        break;
    }
  }
  return out;
}

}  // namespace chorus::train
