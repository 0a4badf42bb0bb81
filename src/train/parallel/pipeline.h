// Runs one rank's share of a training step: the forward and backward passes of every micro-batch of every
// chunk in the order a pipeline schedule gives, activations and their gradients passed to the neighbouring
// stages with send/recv, each in order on its own stream. Without pipeline parallelism the same code runs
// one chunk's micro-batches one after another (the 1F1B order with one stage is F0 B0 F1 B1 ...).
//
// A send never waits: it is queued behind the earlier sends of its direction, and its buffer (the micro-batch's
// activations) is not reused until it has completed. A receive waits only for the matching send, because
// each direction of each link is a communicator of its own (grid.h). So the stages can only wait on data the
// schedule says they need, which is what makes any valid schedule run without deadlock.
#ifndef CHORUS_TRAIN_PARALLEL_PIPELINE_H_
#define CHORUS_TRAIN_PARALLEL_PIPELINE_H_

#include <functional>
#include <memory>
#include <vector>

#include "model/gpt_stage.h"
#include "parallel/grid.h"
#include "parallel/schedule.h"

namespace chorus::train {

struct PipelineStats {
  double lossSum = 0;         // summed over this rank's tokens (end of the model only)
  double computeSeconds = 0;  // in forward and backward passes
  double elapsedSeconds = 0;  // the whole schedule, waits included
  int peakActivations = 0;    // micro-batches whose activations were held at once (all chunks)
};

class Pipeline {
 public:
  // `access` is what the stages reach parameters and gradients through (the data-parallel engine, possibly
  // wrapped); tp may be null.
  Pipeline(const ParamLayout& layout, Grid& grid, ScheduleKind schedule, int batch, TensorParallelOps<float>* tp,
           bool sequenceParallel, UnitAccess<float>& access);

  // Fills a micro-batch's tokens and targets (N each).
  using Fill = std::function<void(int micro, int32_t* tokens, int32_t* targets)>;

  // Forward and backward passes of `micros` micro-batches; gradScale is the loss gradient per token.
  PipelineStats train(int micros, float gradScale, const Fill& fill);
  // Forward passes only (validation), micro-batch by micro-batch; returns the summed loss (end of the model).
  double evaluate(int micros, const Fill& fill);

  const std::vector<PipeAction>& lastSchedule() const { return schedule_; }
  int chunks() const { return static_cast<int>(stages_.size()); }
  // Bytes of one micro-batch's activations on this rank (every chunk).
  int64_t activationBytesPerMicro() const;

 private:
  struct Slot {
    std::unique_ptr<StageActivations<float>> acts;
    int micro = -1;  // -1 when free
    Work sendOut, sendGrad;
  };
  Slot& acquire(int chunk, int micro);
  Slot& find(int chunk, int micro);
  void forward(int chunk, int micro, const Fill& fill, PipelineStats& st);
  void backward(int chunk, int micro, float gradScale, PipelineStats& st);
  Comm* inbound(int chunk, bool gradients);
  Comm* outbound(int chunk, bool gradients);
  void drain();

  const ParamLayout& layout_;
  Grid& grid_;
  ScheduleKind kind_;
  int batch_;
  bool sp_;
  UnitAccess<float>& access_;
  std::vector<std::unique_ptr<GptStage<float>>> stages_;
  std::vector<std::vector<std::unique_ptr<Slot>>> slots_;  // per chunk
  std::vector<Buffer<float>> dout_;                        // per chunk: the received output gradient
  Device& device_;                                         // where the activations live
  std::vector<int32_t> hostTokens_, hostTargets_;          // a micro-batch as the sampler writes it
  std::vector<PipeAction> schedule_;
  int held_ = 0;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_PARALLEL_PIPELINE_H_
