// The direct algorithms, for small buffers: one step, every message one FIFO slot to its destination on the lane
// of direct steps (lane 0), where the pairs the operation carries data between are connected (directCarries,
// plan/plan.h). Every rank posts its contribution to every peer at once and handles what
// arrives itself; with ranks that outnumber cores a ring's n-1 dependent steps each cost a scheduling round,
// here every rank runs once. They take a peer set `D` (D::peer(r), primitives.h) instead of one Primitives.
#pragma once

#include <cstddef>

#include "base/host_device.h"
#include "collectives/primitives.h"

namespace chorus::coll {

// Sends premul(input[inOff, inOff + n)) to every other rank.
template <typename D>
CHORUS_HOST_DEVICE void sendToEveryPeer(D& d, const CollArgs& a, size_t inOff, size_t n) {
  for (int r = 0; r < a.nranks; ++r) {
    if (r != a.rank) d.peer(r).send(inOff, n);
  }
}

// output[0, n) = x_0 (+) x_1 (+) ... (+) x_{nranks-1}, folded in rank order so that every rank computes
// bit-identical results (as the ring's single final reduction makes them). This rank's x is premul(input[inOff,
// inOff + n)); every other rank's arrives, premultiplied by its sender, from that rank. The post-divisor
// applies to the last fold.
template <typename D>
CHORUS_HOST_DEVICE void reduceInRankOrder(D& d, const CollArgs& a, size_t inOff, size_t n) {
  for (int r = 0; r < a.nranks; ++r) {
    const bool last = r == a.nranks - 1;
    auto&& p = d.peer(r);  // a Primitives the peer set keeps, or a fresh one
    if (r == a.rank) {
      if (r == 0) {
        p.localCopy(inOff, 0, n, last);
      } else {
        p.localReduce(inOff, 0, n, last);
      }
    } else if (r == 0) {
      p.recv(0, n);  // never the last fold: rank 0 alone would be this rank
    } else {
      p.recvReduceOutput(0, n, last);
    }
  }
}

// Direct all-reduce: every rank posts its whole premultiplied input to every peer, then
// reduces all contributions in rank order into its output.
template <typename D>
CHORUS_HOST_DEVICE void runDirectAllReduce(D& d, const CollArgs& a) {
  const size_t n = a.count;
  if (n == 0) return;
  sendToEveryPeer(d, a, 0, n);
  reduceInRankOrder(d, a, 0, n);
}

// Direct reduce-scatter: block r of every rank's input goes to rank r, which reduces the
// nranks blocks in rank order into its output.
template <typename D>
CHORUS_HOST_DEVICE void runDirectReduceScatter(D& d, const CollArgs& a) {
  const size_t n = a.count;
  if (n == 0) return;
  for (int r = 0; r < a.nranks; ++r) {
    if (r != a.rank) d.peer(r).send(static_cast<size_t>(r) * n, n);
  }
  reduceInRankOrder(d, a, static_cast<size_t>(a.rank) * n, n);
}

// Direct reduce: every rank but the root posts its premultiplied input to the root, which reduces all contributions
// in rank order into its output (the others write nothing). One step where a ring takes n-1 dependent ones and a
// tree its depth, per tree.
template <typename D>
CHORUS_HOST_DEVICE void runDirectReduce(D& d, const CollArgs& a) {
  const size_t n = a.count;
  if (n == 0) return;
  if (a.rank != a.root) {
    d.peer(a.root).send(0, n);
    return;
  }
  reduceInRankOrder(d, a, 0, n);
}

// Direct all-gather: every rank posts its block to every peer, copies its
// own block into place and each peer's block as it arrives.
template <typename D>
CHORUS_HOST_DEVICE void runDirectAllGather(D& d, const CollArgs& a) {
  const size_t n = a.count;
  if (n == 0) return;
  sendToEveryPeer(d, a, 0, n);
  // In place the input is this block of the output already: the copy is then skipped.
  d.peer(a.rank).localCopy(0, static_cast<size_t>(a.rank) * n, n, false);
  for (int r = 0; r < a.nranks; ++r) {
    if (r != a.rank) d.peer(r).recv(static_cast<size_t>(r) * n, n);
  }
}

// Direct broadcast: the root posts its buffer to every peer; the others
// copy what the root posted.
template <typename D>
CHORUS_HOST_DEVICE void runDirectBroadcast(D& d, const CollArgs& a) {
  const size_t n = a.count;
  if (n == 0) return;
  if (a.rank == a.root) {
    sendToEveryPeer(d, a, 0, n);
    d.peer(a.rank).localCopy(0, 0, n, false);  // in place: skipped
    return;
  }
  d.peer(a.root).recv(0, n);
}

}  // namespace chorus::coll
