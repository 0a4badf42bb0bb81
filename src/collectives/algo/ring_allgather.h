// Ring all-gather: every rank's block travels once around the ring, as NCCL's runRing for all-gather.
//
// The input is `count` elements; the output holds nranks blocks of `count`, rank r's block at r * count.
// Each loop moves one chunk (this channel's share of the loop) of every block. Seen from the rank at ring
// position `pos`, with "the rank k ahead" meaning ring[pos + k mod nranks]:
//
//   1. copy this rank's chunk from its input into its own block of the output and send it to the next rank
//      (in place, the input is that output block already: the copy is onto itself, which is harmless);
//   2. nranks - 2 times, for j = 1 .. nranks - 2: receive the chunk of the rank j behind from the previous
//      rank, write it into that rank's output block and forward it to the next rank;
//   3. receive the chunk of the rank 1 ahead (it has been through every other rank) and write it: done.
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
CHORUS_HOST_DEVICE void runRingAllGather(P& p, const CollArgs& a) {
  const int nranks = a.nranks;
  if (a.count == 0) return;
  if (nranks == 1) {
    runLocalCopy(p, a, /*postOp=*/false);
    return;
  }
  const int pos = a.ringIndex;
  const ChunkGrid grid = argsChunkGrid(a, a.count, 1);
  for (size_t gridOffset = 0; gridOffset < a.count; gridOffset += grid.loopElems()) {
    const size_t real = grid.realChunk(gridOffset);
    const size_t chunkOff = grid.offset(gridOffset, real, a.channel, 0);
    const size_t n = grid.elems(chunkOff, real);
    if (n == 0) continue;
    // Where the chunk of the rank k steps ahead of this one lands in the output.
    auto outOffAhead = [&](int k) {
      return static_cast<size_t>(ringRankAfter(a.ring, pos, k, nranks)) * a.count + chunkOff;
    };

    // 1. This rank's chunk enters the ring.
    p.copySend(chunkOff, outOffAhead(0), n, /*postOp=*/false);

    // 2. Store and forward the chunks of the ranks behind.
    for (int j = 1; j < nranks - 1; ++j) p.recvCopySend(outOffAhead(nranks - j), n);

    // 3. The next rank's chunk ends its trip here.
    p.recv(outOffAhead(1), n);
  }
}

}  // namespace chorus::coll
