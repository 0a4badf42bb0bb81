// Pipeline schedules as data: the order in which one stage runs the forward and backward passes of its
// chunks' micro-batches. A pure function of (schedule, stages, stage, micro-batches, chunks), so schedules
// are tested exhaustively on their own (every pass exactly once, forward before backward, runnable by all
// stages together) and measured against their formulas without training anything.
//
//   gpipe        every forward, then every backward (peak stored activations: M)
//   1f1b         PipeDream-Flush: P-p-1 warm-up forwards, then one forward one backward, then cool-down
//                (peak: P-p, at most P)
//   interleaved  Megatron-LM's interleaved 1F1B over V chunks per stage (virtual stages v*P + p); needs M to
//                be a multiple of P; the bubble shrinks by V
#ifndef CHORUS_TRAIN_PARALLEL_SCHEDULE_H_
#define CHORUS_TRAIN_PARALLEL_SCHEDULE_H_

#include <string>
#include <vector>

namespace chorus::train {

enum class ScheduleKind { kGpipe, kOneFOneB, kInterleaved };

// Parses "gpipe", "1f1b" or "interleaved"; throws std::invalid_argument naming the value.
ScheduleKind parseSchedule(const std::string& name);
const char* scheduleName(ScheduleKind kind);

struct PipeAction {
  bool forward = true;
  int chunk = 0;  // which of the stage's chunks (virtual stage chunk * P + stage)
  int micro = 0;
  bool operator==(const PipeAction&) const = default;
};

// The actions of stage `stage` of `stages` for `micros` micro-batches and `chunks` chunks per stage (1 unless
// interleaved). Throws std::invalid_argument when the combination is not allowed (interleaved with micros
// not a multiple of stages).
std::vector<PipeAction> pipelineSchedule(ScheduleKind kind, int stages, int stage, int micros, int chunks);

// The largest number of micro-batches whose activations a stage holds at once under `actions` (forwards
// done, backwards not yet), counted over every chunk.
int peakStoredActivations(const std::vector<PipeAction>& actions);

// The idle fraction of a pipeline of identical stages whose forward and backward take the same time per
// micro-batch and chunk: (P-1) / (V*M + P-1) (GPipe and 1F1B: V = 1).
double idealBubbleFraction(int stages, int micros, int chunks);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_PARALLEL_SCHEDULE_H_
