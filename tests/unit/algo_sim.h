// A symbolic simulator for algorithm schedules: records every rank's calls with StepRecorder, then runs all
// ranks together over bounded FIFO queues, one per directed edge, carrying symbolic values. Ring, tree and
// direct algorithms; for a direct reduction in place it reads this rank's own contribution from a copy, as the
// plan has the executors do (collectives/plan/plan.h, Staging).
//
// A symbolic element says which input element it came from and which ranks' contributions it holds (and how
// many, so a contribution counted twice shows), how many times the premultiplier was applied (once per input
// read) and the post-divisor (postOp) was applied. The simulation checks that the schedules complete (and
// names the stuck ranks and the wait cycle when they do not), that every message is received once and with
// the size it was sent with, that reads and writes stay inside the buffers, and that every output element
// holds what the collective defines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "collectives/primitives.h"
#include "unit/step_recorder.h"

namespace chorus::coll::sim {

enum class Coll { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce };
enum class Algo { kRing, kTree, kDirect };

// One channel's tree: parent[r] (-1 at the root) and children[r].
struct Tree {
  std::vector<int> parent;
  std::vector<std::vector<int>> children;
};

// A heap-shaped tree of the given arity over `order`: order[0] is the root, order[i]'s parent is
// order[(i - 1) / arity].
Tree heapTree(const std::vector<int>& order, int arity);

// The two trees of a double binary tree over nranks ranks: the first over 0..n-1, the second over the ranks
// in mirrored order (n-1..0), so that most leaves of one are inner nodes of the other. Channel c uses tree
// c % 2.
std::vector<Tree> doubleBinaryTree(int nranks);

struct SimConfig {
  Coll coll = Coll::kAllReduce;
  Algo algo = Algo::kRing;
  int nranks = 1;
  int root = 0;
  size_t count = 0;
  size_t chunkElems = 1;
  size_t grainElems = 1;
  int nChannels = 1;
  size_t slots = 2;      // messages in flight per directed edge
  bool inPlace = false;  // input aliases output (checked: no input element read after its alias is written)
  std::vector<std::vector<int>> rings;  // per channel (ring algorithms)
  std::vector<Tree> trees;              // per channel (tree algorithms); direct algorithms need neither
  // Tests of the simulator itself: edits a recorded schedule (channel, rank, steps) before it runs.
  std::function<void(int, int, std::vector<Step>&)> mutate;
};

struct SimResult {
  bool ok = true;
  size_t steps = 0;  // calls executed, all ranks and channels
  std::string report;
};

// Records the schedules of every rank and channel and simulates them; the result's report lists the first
// problems found (and the configuration).
SimResult simulate(const SimConfig& cfg);

// Only records: the schedule of `rank` on `channel` (tests of call counts and of count == 0).
std::vector<Step> recordSchedule(const SimConfig& cfg, int channel, int rank);

std::string describe(const SimConfig& cfg);

}  // namespace chorus::coll::sim

#include "unit/algo_sim_impl.h"
