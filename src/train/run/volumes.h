// What each parallel group should move per training step, from the formulas of the literature: Megatron-LM's
// for tensor parallelism (4 all-reduces of b*s*h per layer per micro-batch, forward and backward, or with
// sequence parallelism the same volume as all-gathers and reduce-scatters), pipeline parallelism (b*s*h of
// activations forward and of gradients backward per micro-batch per stage boundary), and ZeRO's for data
// parallelism (the gradient reduced once per step: Psi elements; ZeRO-2/3 every micro-batch; the parameters
// gathered after the update (ZeRO-1/2) or before each use (ZeRO-3)). The trainer prints them beside what its
// communicators measured.
#ifndef CHORUS_TRAIN_RUN_VOLUMES_H_
#define CHORUS_TRAIN_RUN_VOLUMES_H_

#include <vector>

#include "model/config.h"
#include "run/report.h"

namespace chorus::train {

struct VolumeInputs {
  ModelConfig model;
  ModelPart part;
  int batch = 1, micros = 1, dp = 1, zero = 0, stage = 0, stages = 1;
  bool sequenceParallel = false, bf16 = false;
  int64_t psi = 0;  // elements of this rank's flat parameter buffer
};

std::vector<ExpectedVolume> expectedVolumes(const VolumeInputs& in);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_RUN_VOLUMES_H_
