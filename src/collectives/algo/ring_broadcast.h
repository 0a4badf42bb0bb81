// Ring broadcast: a chain from the root along the ring, as NCCL's runRing for broadcast.
//
// The root's input (count elements) ends in every rank's output. The chain starts at the root's ring
// position and follows the ring; the rank just before the root ends it. Each loop moves one chunk (this
// channel's share of the loop), so the chunks pipeline down the chain. At distance d from the root:
//
//   d == 0 (the root): copy the chunk from input to output and send it to the next rank (in place, the copy
//                      is onto itself);
//   0 < d < nranks - 1: receive the chunk, write it to the output and forward it;
//   d == nranks - 1:    receive the chunk and write it: the chain ends here.
//
// With one rank the input is copied to the output. The ring must contain the root.
#pragma once

#include <cstddef>

#include "base/host_device.h"
#include "collectives/algo/chunk_loop.h"
#include "collectives/pattern/chunk_grid.h"
#include "collectives/pattern/ring.h"
#include "collectives/primitives.h"

namespace chorus::coll {

template <typename P>
CHORUS_HOST_DEVICE void runRingBroadcast(P& p, const CollArgs& a) {
  const int nranks = a.nranks;
  if (a.count == 0) return;
  if (nranks == 1) {
    runLocalCopy(p, a, /*postOp=*/false);
    return;
  }
  const int dist = ringDistance(ringPositionOf(a.ring, nranks, a.root), a.ringIndex, nranks);
  const ChunkGrid grid = argsChunkGrid(a, a.count, 1);
  for (size_t gridOffset = 0; gridOffset < a.count; gridOffset += grid.loopElems()) {
    const size_t real = grid.realChunk(gridOffset);
    const size_t off = grid.offset(gridOffset, real, a.channel, 0);
    const size_t n = grid.elems(off, real);
    if (n == 0) continue;
    if (dist == 0) {
      p.copySend(off, off, n, /*postOp=*/false);  // the root starts the chain
    } else if (dist == nranks - 1) {
      p.recv(off, n);  // the last rank ends it
    } else {
      p.recvCopySend(off, n);  // everyone between keeps a copy and passes it on
    }
  }
}

}  // namespace chorus::coll
