// Tree broadcast: the root's input flows down the tree to every rank's output.
//
// The executor builds this channel's tree rooted at the broadcast root; the algorithm only relies on
// treeParent == -1 meaning "I am the root" and treeNChildren == 0 meaning "I am a leaf". `down` receives
// from the parent and sends to the children. For every chunk (this channel's share of each loop):
//
//   root:   copy the chunk from input to output and send it to its children (in place, onto itself);
//   inner:  receive it from the parent, write it to the output, forward it to its children;
//   leaf:   receive it and write it to the output.
//
// A root without children (one rank) copies its input to its output.
#pragma once

#include <cstddef>

#include "base/host_device.h"
#include "collectives/algo/chunk_loop.h"
#include "collectives/pattern/chunk_grid.h"
#include "collectives/primitives.h"

namespace chorus::coll {

template <typename P>
CHORUS_HOST_DEVICE void runTreeBroadcast(P& down, const CollArgs& a) {
  if (a.count == 0) return;
  const bool isRoot = a.treeParent < 0;
  const bool isLeaf = a.treeNChildren == 0;
  if (isRoot && isLeaf) {
    runLocalCopy(down, a, /*postOp=*/false);
    return;
  }
  const ChunkGrid grid = argsChunkGrid(a, a.count, 1);
  for (size_t gridOffset = 0; gridOffset < a.count; gridOffset += grid.loopElems()) {
    const size_t real = grid.realChunk(gridOffset);
    const size_t off = grid.offset(gridOffset, real, a.channel, 0);
    const size_t n = grid.elems(off, real);
    if (n == 0) continue;
    if (isRoot) {
      down.copySend(off, off, n, /*postOp=*/false);
    } else if (isLeaf) {
      down.recv(off, n);
    } else {
      down.recvCopySend(off, n);
    }
  }
}

}  // namespace chorus::coll
