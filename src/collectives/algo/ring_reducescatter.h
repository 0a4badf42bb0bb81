// Ring reduce-scatter: the reduce-scatter half of the ring all-reduce, as NCCL's runRing for reduce-scatter.
//
// The input holds nranks blocks of `count` elements, block r at r * count; the output is `count` elements:
// rank r ends with the reduction over all ranks of their block r. Each loop moves one chunk (this channel's
// share of the loop) of every block. Seen from the rank at ring position `pos`, with "the rank k ahead"
// meaning ring[pos + k mod nranks]:
//
//   1. send this rank's input chunk of the previous rank's block to the next rank: the partial sum of that
//      block starts here, one hop after the rank that will own it;
//   2. nranks - 2 times, for j = 2 .. nranks - 1: receive the partial sum of the block of the rank j behind,
//      add this rank's input chunk of that block, send it on;
//   3. receive the partial sum of this rank's own block, which holds every other rank's contribution: add
//      this rank's input and write the result to the output (with the avg post-divisor).
//
// Every rank sends and receives nranks - 1 chunks per loop. With one rank the input is copied to the output.
#pragma once

#include <cstddef>

#include "base/host_device.h"
#include "collectives/algo/chunk_loop.h"
#include "collectives/pattern/chunk_grid.h"
#include "collectives/pattern/ring.h"
#include "collectives/primitives.h"

namespace chorus::coll {

template <typename P>
CHORUS_HOST_DEVICE void runRingReduceScatter(P& p, const CollArgs& a) {
  const int nranks = a.nranks;
  if (a.count == 0) return;
  if (nranks == 1) {
    runLocalCopy(p, a, /*postOp=*/true);
    return;
  }
  const int pos = a.ringIndex;
  const ChunkGrid grid = argsChunkGrid(a, a.count, 1);
  for (size_t gridOffset = 0; gridOffset < a.count; gridOffset += grid.loopElems()) {
    const size_t real = grid.realChunk(gridOffset);
    const size_t chunkOff = grid.offset(gridOffset, real, a.channel, 0);
    const size_t n = grid.elems(chunkOff, real);
    if (n == 0) continue;
    // Where the chunk of the block of the rank k steps ahead of this one lies in the input.
    auto inOffAhead = [&](int k) {
      return static_cast<size_t>(ringRankAfter(a.ring, pos, k, nranks)) * a.count + chunkOff;
    };

    // 1. Start the partial sum of the previous rank's block.
    p.send(inOffAhead(nranks - 1), n);

    // 2. Add this rank's contribution to the partial sums passing through.
    for (int j = 2; j < nranks; ++j) p.recvReduceSend(inOffAhead(nranks - j), n);

    // 3. This rank's own block arrives with every other contribution: finish it into the output.
    p.recvReduceCopy(inOffAhead(0), chunkOff, n, /*postOp=*/true);
  }
}

}  // namespace chorus::coll
