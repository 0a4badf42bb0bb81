// Everything a rank's training builds over its communicators: the grid of groups, its part of the model
// (layout), the data-parallel engine, tensor-parallel ops and the pipeline. Built from a world communicator
// and the options; an elastic run builds it again over the survivors' communicator after a rank is lost.
#ifndef CHORUS_TRAIN_RUN_SETUP_H_
#define CHORUS_TRAIN_RUN_SETUP_H_

#include <memory>

#include "comm/comm.h"
#include "optim/adamw.h"
#include "parallel/data_parallel.h"
#include "parallel/grid.h"
#include "parallel/pipeline.h"
#include "parallel/tensor_parallel.h"
#include "run/options.h"

namespace chorus::train {

struct Setup {
  // `opt` must have been fitted to world.size() (fitToWorld).
  Setup(const TrainOptions& opt, Comm& world);

  // Marks every communicator this setup holds as failed, so destroying it aborts them instead of waiting for
  // peers that may be gone.
  void abandon();

  Comm& world;
  Grid grid;
  ParamLayout layout;
  // Bookkeeping reductions (loss, norm, memory table, checkpoint manifest) on a communicator of their own,
  // so the data-parallel group's statistics count only the training traffic.
  std::unique_ptr<Comm> control;
  // Each element counts once towards the global norm: copies that tensor parallelism keeps on every rank
  // count on tensor-parallel rank 0, and the last stage's copy of the tied embedding not at all.
  TensorMask normMask;
  std::unique_ptr<DataParallel> engine;
  std::unique_ptr<TensorParallel> tpOps;
  std::unique_ptr<SequenceParallelGrads> spGrads;
  std::unique_ptr<Pipeline> pipeline;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_RUN_SETUP_H_
