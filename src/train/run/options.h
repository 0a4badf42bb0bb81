// chorus-train's command line: every flag, its default and its check. A bad flag or an impossible value is
// reported in one line and the program exits with status 2 before it does any work.
#ifndef CHORUS_TRAIN_RUN_OPTIONS_H_
#define CHORUS_TRAIN_RUN_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "model/config.h"

namespace chorus::train {

struct TrainOptions {
  ModelConfig model;
  int batch = 16;       // sequences per data-parallel rank per micro-step
  int gradAccum = 1;    // micro-steps per step
  int globalBatch = 0;  // sequences per step; when set, gradAccum = globalBatch / (dp * batch)
  int steps = 600;      // total steps (a resumed run stops at the same step)
  float lr = 3e-3f;
  float minLr = 0.0f;
  int warmup = 0;
  std::string lrSchedule = "constant";  // constant | cosine
  float weightDecay = 0.1f;
  float beta1 = 0.9f, beta2 = 0.95f;
  float clip = 1.0f;  // global-norm clipping threshold; 0 turns it off
  uint64_t seed = 1;
  std::string corpus = "jargon";  // jargon | synthetic | a path
  int dp = 0, tp = 1, pp = 1;     // dp 0: every rank not used by tp * pp
  bool sequenceParallel = false;
  std::string pipeSchedule = "1f1b";  // gpipe | 1f1b | interleaved
  int virtualStages = 1;
  int zero = 0;
  double bucketMb = 4.0;
  std::string gradCommDtype = "fp32";  // fp32 | bf16
  std::string backend = "chorus";      // chorus | mpi
  std::string device = "host";         // host | cuda | emulated (run/make_device.h)
  int threads = 1;                     // ranks as threads of this process
  std::string csv, save, resume;
  std::string dumpGrads;  // write the last step's gradient here, in checkpoint form, for tests
  int saveEvery = 0;
  int evalEvery = 100;
  int evalBatches = 8;
  int logEvery = 1;
  int blasThreads = 1;
  int peakMs = 300;  // time spent measuring the GEMM peak that MFU is reported against
  bool quiet = false;
  bool elastic = false;   // survive the loss of data-parallel ranks (in-memory snapshots, shrink, continue)
  int snapshotEvery = 5;  // steps between the elastic run's in-memory snapshots
  int faultRank = -1;     // fault injection for tests: this world rank SIGKILLs itself ...
  int faultStep = 0;      // ... at the start of this step

  int globalSequences(int dpSize) const { return dpSize * batch * gradAccum; }
};

// A subcommand other than training.
struct CheckpointCommand {
  std::string name;  // "diff" or "info"
  std::string a, b;
  double rtol = 0;
};

struct ParsedCommandLine {
  int exitCode = -1;  // >= 0: exit now with this status (help printed, or an error reported)
  TrainOptions train;
  std::optional<CheckpointCommand> checkpoint;
};

ParsedCommandLine parseCommandLine(int argc, char** argv);

// Checks that need the world size: the layout divides it, the global batch divides by the data-parallel
// batch. Fills in dp and gradAccum; returns an error message, or "" when the options fit.
std::string fitToWorld(TrainOptions& opt, int worldSize);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_RUN_OPTIONS_H_
