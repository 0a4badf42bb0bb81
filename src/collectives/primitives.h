// The Primitives contract: the vocabulary every algorithm in src/collectives/algo is written in.
//
// An algorithm is a CHORUS_HOST_DEVICE function template over a Primitives type `P`, e.g.
//
//   template <typename P> CHORUS_HOST_DEVICE void runRingAllReduce(P& p, const CollArgs& a);
//
// It never names a transport, allocates, throws, uses virtual calls or std containers: the same source is
// instantiated by the host executor (HostPrims over transport FIFOs), by the CUDA executor (DevicePrims over
// device FIFOs), and by tests (StepRecorder in tests/unit, which records the schedule). A failure inside a
// Primitives call ends the algorithm the executor's way: HostPrims throws chorus::Error (the algorithm holds
// nothing to release, so unwinding through it is safe); DevicePrims sets the block's stop flag, after which
// every call returns at once.
//
// Direct algorithms (algo/direct.h) talk to every rank at once. They take a peer set `D` instead of one
// Primitives: `d.peer(r)` returns a Primitives bound to rank r alone (receiving from r and sending to r, on lane 0,
// in the directions the operation carries data in); `d.peer(a.rank)` has no peers and serves the local calls.
//
// A Primitives object is bound, for one algorithm run on one channel, to:
//   - the user's input buffer and output buffer (element offsets below index them), the element type and
//     the reduction (with NCCL's avg epilogue: a premultiplier applied to local input as it enters, and a
//     post-divisor applied where `postOp` is true);
//   - up to kMaxRecvPeers peers it receives from and kMaxSendPeers peers it sends to, fixed at construction
//     (ring: one prev and one next; tree: children and parent; p2p: one peer).
//
// Every call moves `n` elements (n may be 0: then the call does nothing and sends nothing; algorithms skip
// such calls consistently on both sides). Offsets and counts are in elements. Where a call receives, it
// receives from every recv peer and reduces all of them; where it sends, it sends to every send peer the
// same data. Message boundaries are implicit: a receiver's call with n elements consumes exactly what the
// matching sender's call with the same n produced.
//
//   send(inOff, n)                         out to peers:   premul(input[inOff..])
//   sendFromOutput(outOff, n)              out to peers:   output[outOff..]
//   recv(outOff, n)                        output[outOff..] = in-from-peers
//   recvReduceSend(inOff, n)               out to peers:   reduce(premul(input[inOff..]), in-from-peers)
//   recvReduceCopy(inOff, outOff, n, postOp)      output = reduce(premul(input), in-from-peers) [postOp]
//   recvReduceCopySend(inOff, outOff, n, postOp)  output = reduce(premul(input), in-from-peers) [postOp],
//                                                 and the same values out to peers
//   recvCopySend(outOff, n)                output[outOff..] = in-from-peers, and the same out to peers
//   copySend(inOff, outOff, n, postOp)     output[outOff..] = premul(input[inOff..]) [postOp], and out to peers
//   localCopy(inOff, outOff, n, postOp)    output[outOff..] = premul(input[inOff..]) [postOp]; no peers
//   recvReduceOutput(outOff, n, postOp)    output[outOff..] = reduce(in-from-peers, output[outOff..]) [postOp]
//   localReduce(inOff, outOff, n, postOp)  output[outOff..] = reduce(premul(input[inOff..]), output[outOff..])
//                                          [postOp]; no peers
//
// The last two accumulate into output that an earlier call wrote: the direct algorithms reduce every rank's
// contribution in rank order with them, so that all ranks compute bit-identical results.
//
// "premul" is the identity except for avg on floating types; "postOp" divides by nranks for avg on integer
// types (and is the identity otherwise). Peers are addressed by index into the peer lists given at
// construction; algorithms that need to talk to one peer of several (gather at a tree root, say) construct
// a Primitives per peer set.
//
// Direct variants (zero copy through a peer's mapped buffer) are selected by the executor, not by the
// algorithm: the algorithm's calls stay the same.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/host_device.h"

namespace chorus::coll {

constexpr int kMaxRecvPeers = 4;  // tree: up to 3 children (+ spare)
constexpr int kMaxSendPeers = 4;

// Arguments every algorithm reads (plain data, copied to the device unchanged).
struct CollArgs {
  size_t count = 0;  // elements: per rank for all-gather/reduce-scatter blocks, total otherwise
  int nranks = 1;
  int rank = 0;       // the caller's rank in the communicator
  int root = 0;       // broadcast/reduce/gather/scatter root, as a communicator rank
  int ringIndex = 0;  // the caller's position in this channel's ring
  int channel = 0;    // this channel, in [0, nChannels)
  int nChannels = 1;
  size_t chunkElems = 0;      // elements per chunk (one Primitives call, per channel); > 0
  size_t grainElems = 1;      // chunks are rounded up to a multiple of this (64 / sizeof(T)) where chunkElems allows
  const int* ring = nullptr;  // this channel's ring order: ring[i] is the rank at position i (nranks entries)
  int treeParent = -1;        // tree algorithms: this channel's tree parent rank (-1 at the root)
  int treeNChildren = 0;      // tree algorithms: number of children (0 at a leaf)
};

// Tree algorithms take two Primitives: `up` receives from the children and sends to the parent, `down`
// receives from the parent and sends to the children (either peer list may be empty).

}  // namespace chorus::coll
