// Shared pieces of the algorithm headers: the chunk grid an algorithm walks, and the one-rank case.
//
// Every algorithm pipelines its buffer in chunks of at most CollArgs::chunkElems elements, cut per loop and
// per channel by ChunkGrid (pattern/chunk_grid.h). Each Primitives call moves one chunk; chunks of zero
// elements (the tail of the last loop) are skipped by every rank alike, so no call ever has n == 0 and a
// count of 0 makes no call at all.
#pragma once

#include <cstddef>

#include "base/host_device.h"
#include "collectives/pattern/chunk_grid.h"
#include "collectives/primitives.h"

namespace chorus::coll {

// The grid of an algorithm that moves nBlocks chunks per loop and channel over `count` elements.
CHORUS_HOST_DEVICE ChunkGrid argsChunkGrid(const CollArgs& a, size_t count, int nBlocks) {
  return makeChunkGrid(count, a.chunkElems, a.grainElems, a.nChannels, nBlocks);
}

// One rank alone: this channel's chunks go from input to the same offsets of output with one localCopy each,
// the premultiplier applied as they are read and, where postOp is true, the post-divisor as they are written.
template <typename P>
CHORUS_HOST_DEVICE void runLocalCopy(P& p, const CollArgs& a, bool postOp) {
  const ChunkGrid grid = argsChunkGrid(a, a.count, 1);
  for (size_t gridOffset = 0; gridOffset < a.count; gridOffset += grid.loopElems()) {
    const size_t real = grid.realChunk(gridOffset);
    const size_t off = grid.offset(gridOffset, real, a.channel, 0);
    const size_t n = grid.elems(off, real);
    if (n > 0) p.localCopy(off, off, n, postOp);
  }
}

}  // namespace chorus::coll
