// What each parallel group should move per training step, from the formulas of the literature: Megatron-LM's
// for tensor parallelism (4 all-reduces of b*s*h per layer per micro-batch, forward and backward, or with
// sequence parallelism the same volume as all-gathers and reduce-scatters, plus the all-reduce of the
// replicated tensors' gradients), the vocabulary-parallel cross-entropy's three reductions of b*s values,
// pipeline parallelism (b*s*h of activations forward and of gradients backward per micro-batch per stage
// boundary, on the link between the last and the first stage for the interleaved schedule's wrap), and ZeRO's
// for data parallelism (the gradient reduced once per step: Psi elements; ZeRO-2/3 every micro-batch; the
// parameters gathered after the update (ZeRO-1/2) or before each use (ZeRO-3)). The trainer prints them beside
// what its communicators measured, and every rank checks its own (checkVolumes).
#ifndef CHORUS_TRAIN_RUN_VOLUMES_H_
#define CHORUS_TRAIN_RUN_VOLUMES_H_

#include <string>
#include <vector>

#include "model/config.h"
#include "run/report.h"

namespace chorus::train {

struct VolumeInputs {
  ModelConfig model;
  ModelPart part;
  int batch = 1, micros = 1, dp = 1, zero = 0, stage = 0, stages = 1;
  bool sequenceParallel = false, bf16 = false;
  int64_t psi = 0;         // elements of this rank's flat parameter buffer
  int64_t replicated = 0;  // elements of the tensors tensor parallelism keeps whole on every rank
};

std::vector<ExpectedVolume> expectedVolumes(const VolumeInputs& in);

// Compares what this rank's groups measured over `steps` steps with the formulas, exactly (in bytes): every
// formula's group and collective must have moved its bytes, and nothing may have moved without a formula. ZeRO-3's
// parameter gathers are bounded, not exact (a unit still gathered is not gathered again). Returns one line per
// difference, empty when all agree.
std::vector<std::string> checkVolumes(const std::vector<GroupVolume>& measured,
                                      const std::vector<ExpectedVolume>& expected, int steps);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_RUN_VOLUMES_H_
