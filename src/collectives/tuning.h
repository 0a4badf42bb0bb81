// Tuning, first cut: a cost model (latency + bytes / bandwidth) picks the algorithm, the number of channels
// and the chunk size of each collective. CHORUS_ALGO and CHORUS_CHUNKSIZE override it; CHORUS_DEBUG=INFO with
// CHORUS_DEBUG_SUBSYS=TUNING logs every choice.
//
// The constants were measured on the development machine (2-core Sapphire Rapids VM, see docs/performance.md):
// a shared-memory hop costs about 1 us end to end (publish, wake, read, reduce a small slice), a socket hop
// on loopback about 15 us; shared-memory copies and reductions stream at about 8 GB/s per rank, loopback TCP
// at about 2 GB/s per connection.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include "collectives/coll_op.h"

namespace chorus::coll {

// What the model needs to know about the communicator.
struct TuningContext {
  int nranks = 1;
  int nHosts = 1;
  int maxChannels = 1;  // rings prepared
  int minChannels = 1;
  size_t slotBytes = 0;  // FIFO slot size
  // Bytes an operation handles per channel it uses, up to maxChannels: a host rank's channel is a thread that
  // copies at a few GB/s, a device rank's a CUDA block, one of many that share the GPU's bandwidth.
  size_t bytesPerChannel = size_t(4) << 20;
  // CHORUS_ALGO and CHORUS_CHUNKSIZE as the communicator saw them when it was created (read once, not on
  // every operation).
  std::string algoSpec;
  int64_t forcedChunk = 0;
  // False: the model never picks a direct algorithm (CHORUS_ALGO=direct still does).
  bool directByModel = true;
  // False: the model never picks a tree (CHORUS_ALGO=tree still does). A host communicator sets it when on some host
  // its ranks outnumber their cores: every wait there yields the core, and a tree, whose two channels a host rank ran
  // one after the other, waited 3-9x longer than a ring (docs/performance.md, session 19). With one channel (below)
  // it is level with the ring there (session 31), no gain to change the rule for.
  bool treeByModel = true;
  // Whether a rank's channels run side by side (a GPU's blocks) rather than one after the other on the rank's thread
  // (a host rank). Side by side, a tree takes both trees of the double binary tree at any size, so that every rank is
  // a leaf in one of them (NCCL's balance); one after the other, the second tree only adds a second walk down the
  // tree, so a host tree takes channels as a ring does (docs/performance.md, session 31: a forced tree's 128-byte to
  // 2 KiB broadcast at 4 ranks on 2 cores took 4-7 us with both trees and 0.6-2 with one, 10-25 % less at 2 ranks).
  bool parallelChannels = false;
  // Distinct for every context filled (tune() caches its last decision per thread under this id); 0: none.
  uint64_t id = 0;
};

// A fresh value for TuningContext::id.
uint64_t newTuningId();

// Per-hop latency and per-rank bandwidth of a link class.
struct LinkCost {
  double latencyUs;
  double bandwidthGBs;
};

// The modelled time of running `op` with `algo`, or a negative value when the algorithm does not apply.
double predictUs(const CollOp& op, Algo algo, const TuningContext& t);

// Fills op.algo, op.nChannels and op.chunkBytes.
void tune(CollOp& op, const TuningContext& t);

// The size from which an operation of `type` moves its data between processes of one host with one copy (the
// receiver reads the sender's buffer, transport/cma.h) where the connection allows it, instead of two through the
// FIFO slots: `bytes` as collBytes counts them, or the size of a point-to-point transfer. Only from
// CHORUS_CMA_MIN_BYTES bytes (0, the default: never; measured slower than two copies where it differs), and never
// for a point-to-point transfer that fits the FIFO's slots. The only place this choice is made (the host executor
// asks it per operation).
bool useSingleCopy(CollType type, size_t bytes);

// Whether an operation of `type` over `bytes` (collBytes) sends its peers on the host references to those of its
// bytes that lie in chorusMemAlloc allocations, which they read through a mapping of the allocation
// (base/shared_alloc.h) in one copy, where the slots cost two: broadcast and all-gather out of place, from
// CHORUS_MAPPED_MIN_BYTES (4 MiB; 0: never). The point-to-point engine decides per transfer
// (useSingleCopyToReceiver). Not in place (`inPlace`: the input lies in the output), where the sender has no copy of
// its own to make while its receivers read (the slots' two copies run on two cores, a reference's one on the
// receiver's alone), nor for the reductions, whose references only move a copy from the sender to the receiver's
// scratch: measured as fast or slower (docs/performance.md, session 15).
bool useMappedRefs(CollType type, size_t bytes, bool inPlace);

// Whether a point-to-point transfer of `bytes` whose receiver has announced that it waits for it
// (transport/fifo.h, RecvConnection::announceReceiving) goes by reference, one copy: from CHORUS_P2P_CMA_MIN_BYTES
// bytes (0: never); by default (-1) from 64 KiB where the receiver reads the sender's memory fast (`readsFast`:
// the connection's FifoControl::consumerReadsFast, which both ends see alike) and never elsewhere. The send still
// completes without waiting for anything but that receiver.
bool useSingleCopyToReceiver(size_t bytes, bool readsFast);

// Whether an operation that touches `footprintBytes` of its buffers on this rank (footprintBytes below) writes its
// outputs with streaming stores (reduce::copyBytes' nonTemporal): from `minBytes` (TopoView::streamMinBytes: half
// the last-level cache), past what the cache holds with the peers' share, a plain store first
// reads the line it overwrites and evicts the FIFO slots the copies go through. Counting the input too (it was the
// output alone, docs/performance.md session 20): at 16 MiB, an 8 MiB all-to-all, send/recv or broadcast out of place
// streams, and an in-place one of the same size, whose lines the next call finds in the cache, does not. The host
// executor's collectives and its point-to-point engine both ask it.
inline bool streamsOutput(size_t footprintBytes, size_t minBytes) {
  return footprintBytes >= minBytes;
}

// The bytes an operation with `inputBytes` of input and `outputBytes` of output touches on this rank: both, or, where
// they overlap (in place), the larger.
inline size_t footprintBytes(size_t inputBytes, size_t outputBytes, bool overlapping) {
  return overlapping ? std::max(inputBytes, outputBytes) : inputBytes + outputBytes;
}

// Parses a CHORUS_ALGO value ("ring", "tree", "direct", or per function "allreduce:tree;ring") and returns
// the algorithm forced for `type`, or false when none is. Throws chorusInvalidArgument on an unknown name.
bool forcedAlgo(const std::string& spec, CollType type, Algo* algo);

}  // namespace chorus::coll
