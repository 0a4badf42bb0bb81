// Ring all-reduce: a reduce-scatter followed by an all-gather around the ring, as NCCL's runRing.
//
// Each loop cuts this channel's share of the buffer into nranks chunks, one per rank: chunk b (b a rank)
// is reduced around the ring so that its sum is complete at rank b, then travels once more around the
// ring so that every rank holds it. Seen from the rank at ring position `pos`, with "the rank k ahead"
// meaning ring[pos + k mod nranks]:
//
//   Reduce-scatter (nranks - 1 steps):
//   1. send the chunk of the rank 1 behind (nranks - 1 ahead) to the next rank: it starts its journey here,
//      one hop after its owner, carrying this rank's premultiplied input;
//   2. nranks - 2 times, for j = 2 .. nranks - 1: receive the partial sum of the chunk of the rank j behind
//      from the previous rank, add this rank's input, send it on;
//   3. receive the partial sum of this rank's own chunk: it has been through every other rank, so adding
//      this rank's input completes it. Write it to the output (with the avg post-divisor) and send it on.
//   All-gather (nranks - 1 steps):
//   4. nranks - 2 times, for j = 1 .. nranks - 2: receive the final chunk of the rank j behind, write it to
//      the output and forward it;
//   5. receive the final chunk of the next rank (it went all the way round) and write it: done.
//
// Every rank sends and receives 2 * (nranks - 1) chunks per loop; a chunk's offsets are the same in input
// and output. With one rank the input is copied to the output (premul and post-divisor applied).
#pragma once

#include <cstddef>

#include "base/host_device.h"
#include "collectives/algo/chunk_loop.h"
#include "collectives/pattern/chunk_grid.h"
#include "collectives/pattern/ring.h"
#include "collectives/primitives.h"

namespace chorus::coll {

template <typename P>
CHORUS_HOST_DEVICE void runRingAllReduce(P& p, const CollArgs& a) {
  const int nranks = a.nranks;
  if (a.count == 0) return;
  if (nranks == 1) {
    runLocalCopy(p, a, /*postOp=*/true);
    return;
  }
  const int pos = a.ringIndex;
  const ChunkGrid grid = argsChunkGrid(a, a.count, nranks);
  for (size_t gridOffset = 0; gridOffset < a.count; gridOffset += grid.loopElems()) {
    const size_t real = grid.realChunk(gridOffset);
    size_t off = 0;
    size_t n = 0;
    // The chunk, in this loop and channel, of the rank k steps ahead of this one on the ring.
    auto chunkAhead = [&](int k) {
      off = grid.offset(gridOffset, real, a.channel, ringRankAfter(a.ring, pos, k, nranks));
      n = grid.elems(off, real);
    };

    // 1. Start the chunk of the previous rank: this rank's contribution goes out first.
    chunkAhead(nranks - 1);
    if (n > 0) p.send(off, n);

    // 2. Add this rank's contribution to the partial sums passing through.
    for (int j = 2; j < nranks; ++j) {
      chunkAhead(nranks - j);
      if (n > 0) p.recvReduceSend(off, n);
    }

    // 3. This rank's own chunk arrives with every other contribution: finish it and start its all-gather.
    chunkAhead(0);
    if (n > 0) p.recvReduceCopySend(off, off, n, /*postOp=*/true);

    // 4. Store and forward the finished chunks of the ranks behind.
    for (int j = 1; j < nranks - 1; ++j) {
      chunkAhead(nranks - j);
      if (n > 0) p.recvCopySend(off, n);
    }

    // 5. The last finished chunk (the next rank's) ends its trip here.
    chunkAhead(1);
    if (n > 0) p.recv(off, n);
  }
}

}  // namespace chorus::coll
