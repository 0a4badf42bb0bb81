// One rank's training run: builds its part of the model and the data-parallel engine over the world
// communicator, initialises (or resumes), then runs the steps: micro-batches forward and backward with the
// gradient reduced as backward produces it, global-norm clipping, AdamW, validation, checkpoints, and rank 0's
// report. Every rank of the job runs one Trainer, in its own process or thread.
#ifndef CHORUS_TRAIN_RUN_TRAINER_H_
#define CHORUS_TRAIN_RUN_TRAINER_H_

#include "comm/comm.h"
#include "data/corpus.h"
#include "run/options.h"

namespace chorus::train {

// Trains; throws (CommError, CheckpointError, std::runtime_error) on failure. `opt` has been fitted to the
// world size (fitToWorld).
void trainRank(const TrainOptions& opt, Comm& world, const Corpus& corpus);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_RUN_TRAINER_H_
