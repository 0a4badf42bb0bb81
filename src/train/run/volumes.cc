#include "run/volumes.h"

#include <cmath>
#include <string>

namespace chorus::train {

std::vector<ExpectedVolume> expectedVolumes(const VolumeInputs& in) {
  std::vector<ExpectedVolume> out;
  const double bs = static_cast<double>(in.batch) * in.model.seqLen;
  const double bsh = bs * in.model.dModel * sizeof(float);
  const int t = in.part.tpSize, L = in.part.localLayers(), M = in.micros;
  const bool first = in.part.hasEmbedding, last = in.part.hasHead;
  if (t > 1) {
    // Per micro-batch: 4 per block; the vocabulary-parallel embedding (forward) and head (backward) one more
    // each; and at the head, the cross-entropy's row maximum, sum of exponentials and target logit (b*s each).
    const double ends = (first ? 1 : 0) + (last ? 1 : 0);
    const double loss = last ? 3.0 * bs * sizeof(float) : 0.0;
    const char* lossText = last ? " + 3 x b*s (cross-entropy)" : "";
    if (!in.sequenceParallel) {
      out.push_back({"tensor-parallel", CollKind::kAllReduce, M * ((4.0 * L + ends) * bsh + loss),
                     std::string("4 x layers x b*s*h per micro-batch (+ embedding, head)") + lossText});
    } else {
      out.push_back({"tensor-parallel", CollKind::kAllGather, M * (4.0 * L + ends) * bsh,
                     "sequence parallel: 4 x layers x b*s*h all-gathered (+ embedding, head)"});
      out.push_back({"tensor-parallel", CollKind::kReduceScatter, M * (4.0 * L + ends) * bsh,
                     "sequence parallel: 4 x layers x b*s*h reduce-scattered (+ embedding, head)"});
      out.push_back({"tensor-parallel", CollKind::kAllReduce,
                     M * (static_cast<double>(in.replicated) * sizeof(float) + loss),
                     std::string("sequence parallel: the replicated tensors' gradients per micro-batch") + lossText});
    }
  }
  if (in.stages > 1) {
    // Virtual stage v*P + p sends its activations to the next virtual stage and its input's gradient to the
    // previous: across the link to stage p+1 (p-1), or for the interleaved schedule from the last stage to
    // the first (first to last) over the wrap link.
    const double boundary = in.sequenceParallel ? bsh / t : bsh;
    const int V = static_cast<int>(in.part.chunks.size()), p = in.stage, P = in.stages;
    auto link = [&](const char* group, int count, const char* text) {
      if (count > 0) out.push_back({group, CollKind::kSendRecv, M * static_cast<double>(count) * boundary, text});
    };
    link("pipeline activations out", p < P - 1 ? V : 0, "b*s*h per micro-batch per boundary (forward)");
    link("pipeline activations out (wrap)", p == P - 1 ? V - 1 : 0, "b*s*h per micro-batch per chunk boundary");
    link("pipeline gradients out", p > 0 ? V : 0, "b*s*h per micro-batch per boundary (backward)");
    link("pipeline gradients out (wrap)", p == 0 ? V - 1 : 0, "b*s*h per micro-batch per chunk boundary");
    if (first || last) {
      const double wte = static_cast<double>(in.model.vocab / t) * in.model.dModel * sizeof(float);
      out.push_back({"tied-embedding", CollKind::kAllReduce, wte, "the embedding's gradient, once per step"});
    }
  }
  // The sharded engines (ZeRO-2/3) issue their reduce-scatters (and ZeRO-3 its gathers) even on one rank.
  if (in.dp > 1 || in.zero >= 2) {
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
        if (in.dp > 1)
          out.push_back({"data-parallel", CollKind::kAllGather, param, "the updated parameters, P elements"});
        break;
      default:
        out.push_back({"data-parallel", CollKind::kReduceScatter, M * grad, "the gradient every micro-batch: M x P"});
        // On its own communicator when there are several data-parallel ranks (data_parallel.h).
        out.push_back({in.dp > 1 ? "parameter-gather" : "data-parallel", CollKind::kAllGather, 2.0 * M * param,
                       "at most: each unit before forward and backward, 2 x M x P (less what stays gathered)", true});
        break;
    }
  }
  return out;
}

std::vector<std::string> checkVolumes(const std::vector<GroupVolume>& measured,
                                      const std::vector<ExpectedVolume>& expected, int steps) {
  std::vector<std::string> problems;
  auto find = [&](const std::string& group, int kind) -> const CommStats::Row* {
    for (const GroupVolume& g : measured)
      if (g.group == group) return &g.stats->rows[kind];
    return nullptr;
  };
  for (const ExpectedVolume& e : expected) {
    const CommStats::Row* r = find(e.group, static_cast<int>(e.kind));
    const double got = r ? static_cast<double>(r->messageBytes) : 0.0, want = e.messageBytes * steps;
    if (e.atMost ? got > want : got != want)
      problems.push_back(e.group + " " + collKindName(e.kind) + ": measured " + std::to_string(got / steps) +
                         " bytes per step, formula " + (e.atMost ? "at most " : "") + std::to_string(e.messageBytes));
  }
  for (const GroupVolume& g : measured)
    for (int k = 0; k < static_cast<int>(CollKind::kCount); ++k) {
      if (g.stats->rows[k].calls == 0) continue;
      bool known = false;
      for (const ExpectedVolume& e : expected) known = known || (e.group == g.group && static_cast<int>(e.kind) == k);
      if (!known)
        problems.push_back(g.group + " " + collKindName(static_cast<CollKind>(k)) + ": " +
                           std::to_string(g.stats->rows[k].messageBytes / steps) + " bytes per step with no formula");
    }
  return problems;
}

}  // namespace chorus::train
