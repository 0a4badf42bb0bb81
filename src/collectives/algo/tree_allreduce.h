// Tree all-reduce: reduce up the tree to its root, then broadcast the result down, as NCCL's runTreeUpDown.
//
// Tree fields of CollArgs: treeParent (-1 at the root) and treeNChildren. `up` receives from the children
// and sends to the parent; `down` receives from the parent and sends to the children. The buffer is walked
// in chunks (this channel's share of each loop); the whole up pass runs before the down pass, and the
// chunks pipeline through the tree within each pass.
//
//   Up, for every chunk:
//     leaf:   send its input chunk to the parent;
//     inner:  receive the partial sums of its children, add its input, send the sum to the parent;
//     root:   receive the partial sums of its children, add its input: the chunk is complete; write it to
//             the output (with the avg post-divisor).
//   Down, for every chunk:
//     root:   send the finished chunk from its output to its children;
//     inner:  receive it from the parent, write it to the output, forward it to its children;
//     leaf:   receive it and write it to the output.
//
// A root without children (one rank) copies its input to its output (premul and post-divisor applied).
#pragma once

#include <cstddef>

#include "base/host_device.h"
#include "collectives/algo/chunk_loop.h"
#include "collectives/pattern/chunk_grid.h"
#include "collectives/primitives.h"

namespace chorus::coll {

template <typename P>
CHORUS_HOST_DEVICE void runTreeAllReduce(P& up, P& down, const CollArgs& a) {
  if (a.count == 0) return;
  const bool isRoot = a.treeParent < 0;
  const bool isLeaf = a.treeNChildren == 0;
  if (isRoot && isLeaf) {
    runLocalCopy(up, a, /*postOp=*/true);
    return;
  }
  const ChunkGrid grid = argsChunkGrid(a, a.count, 1);

  // Up: partial sums flow from the leaves to the root.
  for (size_t gridOffset = 0; gridOffset < a.count; gridOffset += grid.loopElems()) {
    const size_t real = grid.realChunk(gridOffset);
    const size_t off = grid.offset(gridOffset, real, a.channel, 0);
    const size_t n = grid.elems(off, real);
    if (n == 0) continue;
    if (isRoot) {
      up.recvReduceCopy(off, off, n, /*postOp=*/true);
    } else if (isLeaf) {
      up.send(off, n);
    } else {
      up.recvReduceSend(off, n);
    }
  }

  // Down: the result flows from the root to the leaves.
  for (size_t gridOffset = 0; gridOffset < a.count; gridOffset += grid.loopElems()) {
    const size_t real = grid.realChunk(gridOffset);
    const size_t off = grid.offset(gridOffset, real, a.channel, 0);
    const size_t n = grid.elems(off, real);
    if (n == 0) continue;
    if (isRoot) {
      down.sendFromOutput(off, n);
    } else if (isLeaf) {
      down.recv(off, n);
    } else {
      down.recvCopySend(off, n);
    }
  }
}

}  // namespace chorus::coll
