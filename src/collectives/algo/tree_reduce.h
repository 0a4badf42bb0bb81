// Tree reduce: partial sums flow up the tree; the root writes the reduction to its output.
//
// The executor builds this channel's tree rooted at the reduce root; the algorithm only relies on
// treeParent == -1 meaning "I am the root" and treeNChildren == 0 meaning "I am a leaf". `up` receives
// from the children and sends to the parent. No rank but the root writes its output. For every chunk
// (this channel's share of each loop):
//
//   leaf:   send its input chunk to the parent;
//   inner:  receive the partial sums of its children, add its input, send the sum to the parent;
//   root:   receive the partial sums of its children, add its input and write the result to the output
//           (with the avg post-divisor).
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
CHORUS_HOST_DEVICE void runTreeReduce(P& up, const CollArgs& a) {
  if (a.count == 0) return;
  const bool isRoot = a.treeParent < 0;
  const bool isLeaf = a.treeNChildren == 0;
  if (isRoot && isLeaf) {
    runLocalCopy(up, a, /*postOp=*/true);
    return;
  }
  const ChunkGrid grid = argsChunkGrid(a, a.count, 1);
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
}

}  // namespace chorus::coll
