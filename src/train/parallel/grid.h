// The 3D layout of the ranks: data x pipeline x tensor parallel, tensor-parallel ranks adjacent (they share a
// host and talk most), data-parallel outermost: world rank = (d * pp + p) * tp + t. One communicator per
// group, made with split: the tensor-parallel group (same d, p), the data-parallel group (same p, t), the tied
// embedding's group (first and last pipeline stage, same t, every d), and for the pipeline one two-rank
// communicator per direction of each link between consecutive stages, so activations and gradients each
// travel in order on a stream of their own (waiting for one never waits for the other). The groups carry the
// training step's tensors, so they live on the rank's device (on a GPU, CUDA communicators split from the host
// world communicator); the world itself stays a host communicator for bookkeeping.
#ifndef CHORUS_TRAIN_PARALLEL_GRID_H_
#define CHORUS_TRAIN_PARALLEL_GRID_H_

#include <memory>
#include <string>
#include <vector>

#include "comm/comm.h"
#include "tensor/device.h"

namespace chorus::train {

class Grid {
 public:
  // Collective over `world`. virtualStages > 1 adds the link from the last stage back to the first (the
  // interleaved schedule wraps around the stages). The groups' buffers are in `device`'s memory.
  Grid(Comm& world, int dp, int tp, int pp, int virtualStages, Device& device);
  // Destroys the communicators in one order on every rank (finalizing one waits for its other members).
  ~Grid();

  int dpSize() const { return dp_; }
  int tpSize() const { return tp_; }
  int ppSize() const { return pp_; }
  int dpRank() const { return d_; }
  int tpRank() const { return t_; }
  int stage() const { return p_; }
  static int worldRank(int d, int p, int t, int pp, int tp) { return (d * pp + p) * tp + t; }

  Comm& world() { return world_; }
  Comm& dpGroup() { return *dpComm_; }
  Comm* tpGroup() { return tpComm_.get(); }      // null without tensor parallelism
  Comm* tiedGroup() { return tiedComm_.get(); }  // null unless pp > 1 and this is the first or last stage
  // Where this stage's activations go to and come from, and gradients likewise (null at the ends).
  // `wrap` selects the link between the last and the first stage.
  Comm* activationsTo(bool wrap) { return wrap ? (p_ == pp_ - 1 ? wrapAct_.get() : nullptr) : link(actLink_, p_); }
  Comm* activationsFrom(bool wrap) { return wrap ? (p_ == 0 ? wrapAct_.get() : nullptr) : link(actLink_, p_ - 1); }
  Comm* gradientsTo(bool wrap) { return wrap ? (p_ == 0 ? wrapGrad_.get() : nullptr) : link(gradLink_, p_ - 1); }
  Comm* gradientsFrom(bool wrap) { return wrap ? (p_ == pp_ - 1 ? wrapGrad_.get() : nullptr) : link(gradLink_, p_); }
  // Every communicator this rank holds, named, for the communication tables.
  std::vector<std::pair<std::string, Comm*>> groups();

  // Abandons every communicator of the grid (Comm::abandon).
  void abandon();

  // The grid as a table of world ranks, for the start banner.
  std::string describe() const;

 private:
  Comm& world_;
  int dp_, tp_, pp_, d_, t_, p_;
  static Comm* link(std::vector<std::unique_ptr<Comm>>& links, int e) {
    return e >= 0 && e < static_cast<int>(links.size()) ? links[e].get() : nullptr;
  }

  std::unique_ptr<Comm> dpComm_, tpComm_, tiedComm_;
  // Link e joins stages e and e+1 (null where this rank is neither); the wrap joins the last and the first.
  std::vector<std::unique_ptr<Comm>> actLink_, gradLink_;
  std::unique_ptr<Comm> wrapAct_, wrapGrad_;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_PARALLEL_GRID_H_
