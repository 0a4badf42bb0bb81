// The parts of the topology the executor needs: per channel a ring (and this rank's place in it), and the
// two trees of the double binary tree. Computed once per communicator by the core from src/topology.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace chorus::coll {

struct TreeView {
  int root = 0;
  std::vector<int> parent;                 // parent[r]: parent rank of r, -1 at the root
  std::vector<std::vector<int>> children;  // children[r]: child ranks of r
};

struct TopoView {
  std::vector<std::vector<int>> rings;  // rings[c][i]: rank at position i of channel c's ring
  std::vector<int> ringIndex;           // ringIndex[c]: this rank's position in rings[c]
  TreeView trees[2];                    // a double binary tree: every rank is a leaf in one of them
  int nHosts = 1;
  bool allSameProcess = false;
  // The most ranks of this communicator that one process runs on one GPU (0: host ranks). Their kernels wait
  // for one another, so all their blocks must be resident on the GPU at once: channels and point-to-point lanes
  // are kept within kDevBlockBudget blocks for all of them together. The same on every rank.
  int ranksPerDevice = 0;
  // The bytes an operation touches on this rank from which its outputs are written with streaming stores
  // (tuning.h, streamsOutput): half the CPU's last-level cache, or CHORUS_STREAM_MIN_BYTES (core/topo_setup.cc).
  // 16 MiB here: half the 32 MiB L3 where it was measured.
  size_t streamMinBytes = size_t{16} << 20;
  // The same for the copies into the peers' FIFO slots (tuning.h, streamsOutput; HostPrimsConfig::nonTemporalSlots).
  size_t slotStreamMinBytes = size_t{16} << 20;
  // The footprint from which, up to slotStreamMinBytes, each thread chooses the slots' store kind by the times it
  // measures (host/slot_store_choice.h), plain stores being the first guess; SIZE_MAX: never.
  size_t slotStoresAdaptFrom = SIZE_MAX;
};

// Blocks that the kernels of the ranks of one process on one GPU may hold at once: a block of 512 threads at
// 128 registers fills a multiprocessor's registers, and the smallest GPU the build targets well (an A100) has
// 108 multiprocessors; the rest is left to other work on the GPU.
constexpr int kDevBlockBudget = 64;

}  // namespace chorus::coll
