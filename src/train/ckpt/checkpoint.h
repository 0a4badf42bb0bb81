// Checkpoints: weights, Adam state, step, RNG seed and data position. Each rank writes one shard file (the part
// of the flat buffers it owns) into a step directory and rank 0 adds a manifest of the layout and of every
// file's size and checksum; the directory is renamed into place only when complete, and DIR/latest names the
// newest one. Loading rebuilds every full tensor from the shard files, whatever layout wrote them, and cuts
// them again for the layout that loads them: a run saved on 4 data-parallel ranks resumes on 2, or with
// another ZeRO stage, tensor- or pipeline-parallel size.
#ifndef CHORUS_TRAIN_CKPT_CHECKPOINT_H_
#define CHORUS_TRAIN_CKPT_CHECKPOINT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ckpt/shard_file.h"
#include "comm/comm.h"
#include "model/config.h"
#include "model/param_layout.h"

namespace chorus::train {

class DataParallel;

// What a checkpoint says about the run beside the tensors.
struct RunState {
  int64_t step = 0;         // steps completed; training resumes at step + 1 (the sampler's data position)
  uint64_t seed = 0;        // the RNG: initialisation and sampling are functions of (seed, step, index)
  std::string corpus;       // where the data came from
  int64_t globalBatch = 0;  // sequences per step
  ModelConfig model;
  int world = 1, dp = 1, tp = 1, pp = 1, zero = 0;  // the layout that wrote it
};

// The whole model: every tensor at full size, parameters and both Adam moments.
struct FullTensor {
  int rows = 0, cols = 1;
  std::vector<float> p, m, v;
};
struct FullState {
  RunState run;
  std::map<std::string, FullTensor> tensors;
};

// What one rank saves: its part of the model (layout), its place in the data-parallel group, and the ranges
// of the flat buffers it owns, read from full-size flat arrays of the layout.
struct ShardSource {
  const ParamLayout* layout = nullptr;
  int dpRank = 0, dpSize = 1, zero = 0;
  std::vector<std::pair<int64_t, int64_t>> ranges;  // (flat offset, count)
  const float *params = nullptr, *m = nullptr, *v = nullptr;
};
// The source for a data-parallel engine's shard, with its values exported into p, m and v (layout size each).
ShardSource engineShard(const DataParallel& engine, std::vector<float>& p, std::vector<float>& m,
                        std::vector<float>& v);

// Saves this rank's shard; collective over `world` (every rank calls it with the same dir and state).
void saveCheckpoint(const std::string& dir, const RunState& run, const ShardSource& shard, Comm& world);

// The newest complete checkpoint under dir (a step directory), or throws CheckpointError saying why none.
std::string latestCheckpoint(const std::string& dir);
// Reads and checks a step directory: the manifest, every file's size and checksum, and that the shards cover
// every element. Throws CheckpointError naming the file and the problem.
FullState loadFullState(const std::string& stepDir);
// Refuses (CheckpointError) a checkpoint of another model shape, saying both shapes.
void checkSameModel(const FullState& state, const ModelConfig& model);
// Gives `engine` its layout's slices of the full state.
void importState(const FullState& state, DataParallel& engine);

// Compares the parameters of two checkpoints: returns |a-b| / |a| over the whole parameter vector (Euclidean
// norms; infinity when the tensors differ in name or shape) and, when `verbose`, prints each tensor's largest
// element difference and relative norm. A norm, not a per-element ratio: Adam scales every update to about
// the learning rate, so an element whose gradient is zero up to rounding (the attention keys' bias, whose
// true gradient vanishes) moves by rounding-sized amounts relative to its own tiny value.
double compareCheckpoints(const FullState& a, const FullState& b, bool verbose);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_CKPT_CHECKPOINT_H_
