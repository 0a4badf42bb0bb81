#pragma once
// Whether an operation's copies into its peers' FIFO slots use streaming stores, learned from the times this thread's
// operations take (HostPrimsConfig::nonTemporalSlots).

#include <cstddef>
#include <cstdint>

#include "collectives/coll_op.h"
#include "collectives/topo_view.h"

namespace chorus::coll {

// Neither store kind wins everywhere on a machine whose cores move between placements (docs/performance.md, session
// 26): where the peer's core shares a cache with this one, plain stores leave a slot's lines in that cache for the
// reader; where it does not, every line crosses from this core's cache, and streamed lines, which the reader takes
// from memory, move 3-4x faster. Per kind of operation and power-of-two size, the chooser keeps a moving average of
// the time per byte with each store kind and takes the faster; every kExploreEvery-th operation of that kind and size
// takes the other, to keep its average current. The first operation of a kind and size is not timed: it pays for
// what a first use pays (pages and lines not yet touched), which would mislead the choices after it. Ranks call the
// same operations in the same order, so they try the other kind together: one rank alone could not see the gain while
// its peers' lines still cross caches.
class SlotStoreChooser {
 public:
  // Often enough to follow a change of placement within a few milliseconds of 1-16 MiB operations, seldom enough
  // that the slower kind costs a few per cent.
  static constexpr uint32_t kExploreEvery = 16;
  // Weight of the newest time in a moving average: the placement changes within seconds, hundreds of operations.
  static constexpr double kNewWeight = 0.5;

  // Whether the next operation of `type` over `bytes` (its footprint on this rank) streams its slot copies.
  // `fallback`: the answer for the first operation of this kind and size (untimed) and the third (the second takes
  // the other kind), before both kinds have been timed.
  bool choose(CollType type, size_t bytes, bool fallback);
  // What an operation chose (`streamed`) and how long it took on this rank, in ns.
  void record(CollType type, size_t bytes, bool streamed, uint64_t ns);

  // The chooser of the calling thread (a host stream's or the user's: each times its own operations).
  static SlotStoreChooser& forThisThread();

 private:
  static constexpr int kSizeClasses = 64;
  static constexpr int kTypes = static_cast<int>(CollType::kRecv) + 1;
  struct Entry {
    double nsPerByte[2] = {0, 0};  // [streamed]; 0: not timed yet
    uint32_t count = 0;            // operations chosen so far
  };
  Entry& entry(CollType type, size_t bytes);

  Entry table_[kTypes][kSizeClasses];
};

// One operation's store kind for its copies into peers' slots: streamed from the view's slotStreamMinBytes on; below
// it, from slotStoresAdaptFrom, the calling thread's chooser's answer, the operation timed from construction to
// finish(); plain elsewhere.
class SlotStoreDecision {
 public:
  // `toPeers`: whether the operation sends to other ranks at all; `footprint`: the bytes it touches on this rank.
  SlotStoreDecision(const TopoView& topo, bool toPeers, CollType type, size_t footprint);

  bool streamed() const { return streamed_; }
  // Gives the chooser the operation's time, where it chose.
  void finish();

 private:
  SlotStoreChooser* chooser_ = nullptr;
  CollType type_;
  size_t footprint_;
  bool streamed_;
  uint64_t startNs_ = 0;
};

}  // namespace chorus::coll
