// An in-memory copy of the training state held by a neighbour (DLRover's "flash checkpoint"): every K steps
// each data-parallel rank keeps a copy of its shard (the flat ranges it owns of the parameters and both Adam
// moments) and sends another to its ring neighbour (d+1) mod D, which keeps it beside its own. No disk is
// touched. When ranks die, the survivors hold, between them, every shard of the state at the snapshot's step
// (as long as no two neighbouring ranks die together) and rebuild the whole state from it for a smaller group.
#ifndef CHORUS_TRAIN_PARALLEL_FLASH_SNAPSHOT_H_
#define CHORUS_TRAIN_PARALLEL_FLASH_SNAPSHOT_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "comm/comm.h"
#include "parallel/data_parallel.h"

namespace chorus::train {

class FlashSnapshot {
 public:
  // Copies this rank's shard and exchanges copies with the ring neighbours; collective over the data-parallel
  // group `dp` (which the engine's shard is of).
  void take(int64_t step, const DataParallel& engine, Comm& dp);

  bool empty() const { return step_ < 0; }
  int64_t step() const { return step_; }

  // Rebuilds the full flat state (parameters, m, v: layout size each) at the snapshot's step from the
  // survivors, over their communicator: every survivor contributes its own copy, and the copy it holds of
  // its left neighbour when that neighbour is in `lost` (old data-parallel ranks). Collective over
  // `survivors`. Throws std::runtime_error when a lost rank's copy died with its neighbour.
  void rebuild(const std::vector<int>& lost, int64_t layoutSize, Comm& survivors, std::vector<float>& params,
               std::vector<float>& m, std::vector<float>& v) const;

  int64_t bytes() const;

 private:
  // One rank's shard: its old data-parallel rank, its ranges of the flat buffers, and for each range the
  // parameters, then m, then v.
  struct Copy {
    int owner = -1;
    std::vector<std::pair<int64_t, int64_t>> ranges;
    std::vector<float> values;
  };
  static void scatterInto(const Copy& c, float* params, float* m, float* v);

  int64_t step_ = -1;
  Copy own_, left_;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_PARALLEL_FLASH_SNAPSHOT_H_
