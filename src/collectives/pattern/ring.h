// Ring index math: positions, ranks and which block a ring position handles at each step.
//
// A channel's ring is an order of the ranks: ring[i] is the rank at position i, the next rank after
// position i is at position i + 1 (mod nranks), the previous one at i - 1. A rank knows its own position
// (CollArgs::ringIndex). Algorithms talk about "the rank k positions ahead of me on the ring", and use
// that rank's number to find its block in rank-indexed buffers (all-gather output, reduce-scatter input).
#pragma once

#include "base/host_device.h"

namespace chorus::coll {

// r mod nranks for r in [0, 2 * nranks): NCCL's modRanks, a subtraction instead of a division.
CHORUS_HOST_DEVICE int modRanks(int r, int nranks) {
  return r >= nranks ? r - nranks : r;
}

// The position k steps after `pos` along the ring (k in [0, nranks)).
CHORUS_HOST_DEVICE int ringPosAfter(int pos, int k, int nranks) {
  return modRanks(pos + k, nranks);
}

// The rank k steps after position `pos` (k in [0, nranks)): NCCL's ring->userRanks[k] seen from pos.
CHORUS_HOST_DEVICE int ringRankAfter(const int* ring, int pos, int k, int nranks) {
  return ring[ringPosAfter(pos, k, nranks)];
}

// The next and previous ranks of position pos.
CHORUS_HOST_DEVICE int ringNextRank(const int* ring, int pos, int nranks) {
  return ringRankAfter(ring, pos, 1, nranks);
}
CHORUS_HOST_DEVICE int ringPrevRank(const int* ring, int pos, int nranks) {
  return ringRankAfter(ring, pos, nranks - 1, nranks);
}

// The position of `rank` on the ring, or -1 when it is not there.
CHORUS_HOST_DEVICE int ringPositionOf(const int* ring, int nranks, int rank) {
  for (int i = 0; i < nranks; ++i) {
    if (ring[i] == rank) return i;
  }
  return -1;
}

// How many steps along the ring `pos` is after `fromPos`: (pos - fromPos) mod nranks.
CHORUS_HOST_DEVICE int ringDistance(int fromPos, int pos, int nranks) {
  return modRanks(pos + nranks - fromPos, nranks);
}

}  // namespace chorus::coll
