// How a collective's elements are cut into pipeline chunks, per loop and per channel, as NCCL's runRing and
// runTreeUpDown cut them.
//
// The buffer of `count` elements is walked in loops. One loop covers nChannels * nBlocks * chunkElems elements
// (nBlocks is nranks for the ring all-reduce, whose loop holds one block per rank, and 1 for the algorithms
// that pipeline one block at a time). Inside a loop, channel c owns nBlocks consecutive chunks of realChunk
// elements each, starting at gridOffset + c * nBlocks * realChunk; chunk b of that run starts b * realChunk
// further.
//
// realChunk is chunkElems except in the last loop, where the remaining elements are spread evenly over the
// channels and blocks (so every channel gets work even for small counts): divUp(remaining, nChannels * nBlocks),
// rounded up to `grain` elements (64 bytes of the element type, as the plan sets it) so that the chunks stay
// aligned, but never above chunkElems (the tuned chunk size). The trailing chunks of the last loop may then hold fewer
// than realChunk elements, or none: elems() says how many, and algorithms skip chunks of 0 elements on every rank
// alike.
//
// Every element in [0, count) lies in exactly one (loop, channel, block) chunk; pattern_ring_test checks it.
#pragma once

#include <cstddef>

#include "base/host_device.h"
#include "collectives/pattern/index_math.h"

namespace chorus::coll {

struct ChunkGrid {
  size_t count = 0;       // elements to cover
  size_t chunkElems = 1;  // elements per chunk (the tuned chunk size; a Primitives call moves it slot by slot); > 0
  size_t grain = 1;       // realChunk is rounded up to a multiple of this where chunkElems allows; > 0
  int nChannels = 1;
  int nBlocks = 1;

  // Elements one loop covers: the step from one gridOffset to the next.
  CHORUS_HOST_DEVICE size_t loopElems() const {
    return static_cast<size_t>(nChannels) * static_cast<size_t>(nBlocks) * chunkElems;
  }

  // Elements per chunk in the loop that starts at gridOffset (< count).
  CHORUS_HOST_DEVICE size_t realChunk(size_t gridOffset) const {
    size_t spread = divUp(count - gridOffset, static_cast<size_t>(nChannels) * static_cast<size_t>(nBlocks));
    size_t real = minOf(chunkElems, spread);
    return minOf(roundUp(real, grain), chunkElems);
  }

  // First element of chunk `block` of `channel` in the loop at gridOffset.
  CHORUS_HOST_DEVICE size_t offset(size_t gridOffset, size_t real, int channel, int block) const {
    return gridOffset +
           (static_cast<size_t>(channel) * static_cast<size_t>(nBlocks) + static_cast<size_t>(block)) * real;
  }

  // Elements of the chunk that starts at off: real, cut at count (0 past the end).
  CHORUS_HOST_DEVICE size_t elems(size_t off, size_t real) const { return off >= count ? 0 : minOf(real, count - off); }
};

// A grid whose zero chunk or grain sizes are read as 1 (a defensive default: a zero chunk would never advance).
CHORUS_HOST_DEVICE ChunkGrid makeChunkGrid(size_t count, size_t chunkElems, size_t grain, int nChannels, int nBlocks) {
  ChunkGrid g;
  g.count = count;
  g.chunkElems = chunkElems == 0 ? 1 : chunkElems;
  g.grain = grain == 0 ? 1 : grain;
  g.nChannels = nChannels < 1 ? 1 : nChannels;
  g.nBlocks = nBlocks < 1 ? 1 : nBlocks;
  return g;
}

}  // namespace chorus::coll
