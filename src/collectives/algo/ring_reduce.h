// Ring reduce: a chain along the ring that ends at the root, as NCCL's runRing for reduce.
//
// The reduction over all ranks of their input (count elements) ends in the root's output; no other rank
// writes its output. The chain starts at the rank just after the root on the ring and goes round to the
// root. Each loop moves one chunk (this channel's share of the loop), so the chunks pipeline along the
// chain. At distance d from the root:
//
//   d == 1:          send this rank's input chunk to the next rank: the partial sum starts here;
//   1 < d < nranks:  receive the partial sum, add this rank's input chunk, send it on;
//   d == 0 (root):   receive the partial sum, which holds every other rank's contribution, add the root's
//                    input and write the result to the output (with the avg post-divisor).
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
CHORUS_HOST_DEVICE void runRingReduce(P& p, const CollArgs& a) {
  const int nranks = a.nranks;
  if (a.count == 0) return;
  if (nranks == 1) {
    runLocalCopy(p, a, /*postOp=*/true);
    return;
  }
  const int dist = ringDistance(ringPositionOf(a.ring, nranks, a.root), a.ringIndex, nranks);
  const ChunkGrid grid = argsChunkGrid(a, a.count, 1);
  for (size_t gridOffset = 0; gridOffset < a.count; gridOffset += grid.loopElems()) {
    const size_t real = grid.realChunk(gridOffset);
    const size_t off = grid.offset(gridOffset, real, a.channel, 0);
    const size_t n = grid.elems(off, real);
    if (n == 0) continue;
    if (dist == 1) {
      p.send(off, n);  // the chain starts after the root
    } else if (dist == 0) {
      p.recvReduceCopy(off, off, n, /*postOp=*/true);  // and ends at the root with the final value
    } else {
      p.recvReduceSend(off, n);  // everyone between adds its contribution
    }
  }
}

}  // namespace chorus::coll
