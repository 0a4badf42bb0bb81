// HostPrims: the Primitives contract (collectives/primitives.h) on CPU memory over transport FIFOs.
//
// Each call is cut into slices of one FIFO slot. For each slice it waits for a published slot from every
// receive peer and a free slot at every send peer, computes straight from the received slot (it lives in
// shared memory for shm peers) into the destination, then publishes and frees. Sender and receiver cut a
// call with the same n into the same slices, because every rank uses the same slot size. Several slots
// per connection keep a pipeline of slices in flight. A wait that fails (deadline, abort, a closed peer) or a
// slot of another size than expected throws chorus::Error out of the call (base/error.h).
//
// Single copy (HostPrimsConfig::singleCopy): where what a call sends to a peer lies, once the slice is done, in a
// user buffer of this rank (the input sent unchanged, the output that a copy, reduction or receive just wrote, or
// the output that sendFromOutput forwards) and the peer's connection takes remote refs (transport/fifo.h), the
// slot carries a reference to that buffer instead of the bytes, and the receiver copies them straight from this
// process into its destination (or, to reduce them, into a scratch that stays in cache). A reference may cover
// many slots' worth; every slice still starts at a multiple of the slot size, so that a rank receiving references
// from one peer and slots from another, or forwarding references as slots, cuts the call in agreement with both.
// The ends that carried references are noted in the config's RefLedger, which the executor drains before the
// operation ends. The algorithms do not know: their calls are the same (primitives.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/wait.h"
#include "collectives/host/ref_ledger.h"
#include "collectives/primitives.h"
#include "collectives/reduce/reduce.h"
#include "transport/fifo.h"

namespace chorus::coll {

// What one HostPrims works on.
struct HostPrimsConfig {
  const void* input = nullptr;
  void* output = nullptr;
  size_t eltSize = 1;
  const reduce::Kernels* kernels = nullptr;
  reduce::ReduceParams premul;     // premultiplier of local input (postDiv 1)
  int64_t postDiv = 1;             // divisor applied where postOp is true
  bool nonTemporalOutput = false;  // streaming stores for final output writes (outputs larger than cache)
  // Streaming stores for the copies into send slots: the receiver then reads the lines from memory instead of from
  // this core's cache, which costs little where the cores share a cache and saves most of the copy where they do not
  // (tuning.h, streamsSlots).
  bool nonTemporalSlots = false;
  const WaitContext* ctx = nullptr;
  uint32_t slotTag = 0;  // the operation's tag (collectives/slot_tag.h), carried and checked in every slot
  // Single copy: send remote refs to the peers whose connections take them (tuning.h useSingleCopy).
  bool singleCopy = false;
  // With singleCopy: references only to bytes that lie in a chorusMemAlloc allocation (tuning.h useMappedRefs),
  // which the peer maps; the rest travel through the slots.
  bool mappedRefsOnly = false;
  // References may name the input: false where the operation overwrites its input region before the receivers
  // are known to have read it (an in-place direct reduction writes its output before its peers have folded in
  // what this rank sent).
  bool inputRefs = true;
  RefLedger* ledger = nullptr;  // the ends that carried references (required when singleCopy)
};

// The connections one HostPrims receives from and sends to, with the slice they cut calls into. Made once per
// peer set (the host executor keeps a plan's with the plan) rather than per primitives object: looking the
// connections up, taking the smallest slot and copying them into each HostPrims was about 120 of the 1,350
// instructions per call of a blocking 2-rank 8-byte broadcast (docs/performance.md, session 30).
struct PrimsPeers {
  transport::RecvConnection* recv[kMaxRecvPeers] = {};  // [0, nrecv) valid
  transport::SendConnection* send[kMaxSendPeers] = {};  // [0, nsend) valid
  int nrecv = 0;
  int nsend = 0;
  size_t sliceElems = SIZE_MAX;  // elements per slice: one slot of the smallest peer's FIFO; SIZE_MAX: no peer

  // The peers given, for elements of `eltSize` bytes.
  static PrimsPeers over(transport::RecvConnection* const* recvs, int nrecv, transport::SendConnection* const* sends,
                         int nsend, size_t eltSize);
};

class HostPrims {
 public:
  // `cfg` and `peers` must outlive the primitives (they keep references to them).
  HostPrims(const HostPrimsConfig& cfg, const PrimsPeers& peers) : cfg_(cfg), peers_(peers) {}

  void send(size_t inOff, size_t n);
  void sendFromOutput(size_t outOff, size_t n);
  void recv(size_t outOff, size_t n);
  void recvReduceSend(size_t inOff, size_t n);
  void recvReduceCopy(size_t inOff, size_t outOff, size_t n, bool postOp);
  void recvReduceCopySend(size_t inOff, size_t outOff, size_t n, bool postOp);
  void recvCopySend(size_t outOff, size_t n);
  void copySend(size_t inOff, size_t outOff, size_t n, bool postOp);
  void localCopy(size_t inOff, size_t outOff, size_t n, bool postOp);
  void recvReduceOutput(size_t outOff, size_t n, bool postOp);
  void localReduce(size_t inOff, size_t outOff, size_t n, bool postOp);

 private:
  enum Src : int { kFromInput, kFromOutput, kFromRecv, kReduceInputRecv, kReduceRecvOutput, kReduceInputOutput };
  // The one loop behind every call: source of the values, whether they land in the output (and where),
  // whether they go out to the send peers, and whether the post-op applies.
  void run(Src src, size_t inOff, bool toOutput, size_t outOff, bool toPeers, size_t n, bool postOp);
  // run() for a call that fits a mailbox line (transport/fifo.h): one slice, no references.
  void runSmall(Src src, size_t inOff, bool toOutput, size_t outOff, bool toPeers, size_t n, bool postOp);
  // run() for the others: slice by slice, with references where they apply.
  void runSlices(Src src, size_t inOff, bool toOutput, size_t outOff, bool toPeers, size_t n, bool postOp);
  // Whether the input goes out as it is: no premultiplier, and no post-divisor where `postDivided` (the post-op
  // applies to where it is written). compute() copies it then, refSource() may send a reference to it.
  bool inputUnscaled(bool postDivided) const;
  // Whether compute() copies `src` unchanged into the output (with streaming stores when the config asks for them).
  bool streamsCopy(Src src, bool postOp) const;
  // Computes m elements of one slice from `src` into primary (the output, or the first send slot).
  void compute(Src src, char* primary, bool primaryIsOutput, const char* inPtr, const char* outPtr,
               const void* const* slots, size_t m, bool postOp);
  // What a receive peer's slot holds during a call: a slot of data (consumed by one slice), or a remote ref of
  // which `used` bytes have been consumed.
  struct Held {
    const void* slot;
    uint64_t word;
    size_t used;
  };
  // The user buffer that holds, once a slice of the call is done, exactly what it sends (the slice at `done`
  // elements starts at the returned pointer + done * eltSize), or nullptr when what it sends is computed into the
  // slots. *early: the bytes are there before the slice's work (the input, or sendFromOutput's output).
  const char* refSource(Src src, size_t inOff, bool toOutput, size_t outOff, bool postOp, bool* early) const;
  // Checks a receive peer's slot word at `left` elements before the call's end; throws (mismatch) when it is not
  // a slot or a reference this call can take.
  void checkWord(int i, uint64_t word, size_t left) const;
  // Reduces local input with every receive peer's slot into dst.
  void reduceInto(char* dst, const char* local, const void* const* slots, size_t m, bool postOp);
  // Copies a slice (nothing where dst is src), with streaming stores where `nonTemporal`.
  void copyOut(void* dst, const void* src, size_t bytes, bool nonTemporal);
  // Whether a write into the output (`toOutput`) or into a send slot streams.
  bool streamsTo(bool toOutput) const { return toOutput ? cfg_.nonTemporalOutput : cfg_.nonTemporalSlots; }
  // Throws for a slot whose word (bytes and tag) from peers_.recv[i] is not the one expected.
  [[noreturn]] void mismatch(int i, uint64_t got, uint64_t want) const;

  // Held, not copied: a config outlives the primitives made from it (the executor makes both per collective), and a
  // direct algorithm makes primitives for every peer on each call; the peers outlive them too (a plan's setup keeps
  // a ring's or a tree's, a direct algorithm keeps each peer's beside its primitives).
  const HostPrimsConfig& cfg_;
  const PrimsPeers& peers_;
};

}  // namespace chorus::coll
