#include "collectives/host/host_prims.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "base/shared_alloc.h"
#include "collectives/slot_tag.h"

namespace chorus::coll {

namespace {

// Slots' worth of a received reference that one slice of a reduction copies into scratch.
constexpr size_t kRefScratchSlots = 2;

// Receive peer i's scratch of `bytes` for the references a reduction reads, kept per thread (and grown once).
char* refScratch(size_t bytes, int i) {
  thread_local std::vector<char> scratch;
  const size_t need = bytes * kMaxRecvPeers;
  if (scratch.size() < need) scratch.resize(need);
  return scratch.data() + static_cast<size_t>(i) * bytes;
}

}  // namespace

PrimsPeers PrimsPeers::over(transport::RecvConnection* const* recvs, int nrecv, transport::SendConnection* const* sends,
                            int nsend, size_t eltSize) {
  CHORUS_ENFORCE(nrecv <= kMaxRecvPeers && nsend <= kMaxSendPeers, "too many peers");
  PrimsPeers p;
  p.nrecv = nrecv;
  p.nsend = nsend;
  size_t slot = 0;
  for (int i = 0; i < nrecv; ++i) {
    p.recv[i] = recvs[i];
    slot = slot == 0 ? recvs[i]->slotBytes() : std::min(slot, recvs[i]->slotBytes());
  }
  for (int i = 0; i < nsend; ++i) {
    p.send[i] = sends[i];
    slot = slot == 0 ? sends[i]->slotBytes() : std::min(slot, sends[i]->slotBytes());
  }
  p.sliceElems = slot == 0 ? SIZE_MAX : std::max<size_t>(slot / eltSize, 1);
  return p;
}

void HostPrims::send(size_t inOff, size_t n) {
  run(kFromInput, inOff, false, 0, true, n, false);
}
void HostPrims::sendFromOutput(size_t outOff, size_t n) {
  run(kFromOutput, 0, false, outOff, true, n, false);
}
void HostPrims::recv(size_t outOff, size_t n) {
  run(kFromRecv, 0, true, outOff, false, n, false);
}
void HostPrims::recvReduceSend(size_t inOff, size_t n) {
  run(kReduceInputRecv, inOff, false, 0, true, n, false);
}
void HostPrims::recvReduceCopy(size_t inOff, size_t outOff, size_t n, bool postOp) {
  run(kReduceInputRecv, inOff, true, outOff, false, n, postOp);
}
void HostPrims::recvReduceCopySend(size_t inOff, size_t outOff, size_t n, bool postOp) {
  run(kReduceInputRecv, inOff, true, outOff, true, n, postOp);
}
void HostPrims::recvCopySend(size_t outOff, size_t n) {
  run(kFromRecv, 0, true, outOff, true, n, false);
}
void HostPrims::copySend(size_t inOff, size_t outOff, size_t n, bool postOp) {
  run(kFromInput, inOff, true, outOff, true, n, postOp);
}
void HostPrims::localCopy(size_t inOff, size_t outOff, size_t n, bool postOp) {
  run(kFromInput, inOff, true, outOff, false, n, postOp);
}

void HostPrims::recvReduceOutput(size_t outOff, size_t n, bool postOp) {
  run(kReduceRecvOutput, 0, true, outOff, false, n, postOp);
}
void HostPrims::localReduce(size_t inOff, size_t outOff, size_t n, bool postOp) {
  run(kReduceInputOutput, inOff, true, outOff, false, n, postOp);
}

void HostPrims::mismatch(int i, uint64_t got, uint64_t want) const {
  // The FIFOs of this communicator no longer line up with the peer's: it cannot be used any more.
  CHORUS_THROW(Status::kRemoteError, peers_.recv[i]->what(), ": the peer sent ",
               describeSlotTag(static_cast<uint32_t>(got >> 32)), " with ", got & transport::kSlotBytesMask,
               " bytes where this rank runs ", describeSlotTag(static_cast<uint32_t>(want >> 32)), " and expects ",
               want & transport::kSlotBytesMask,
               ": ranks called different collectives, types, operations, roots or counts, or in a different order",
               " (CHORUS_CHECK=1 names the differing fields before any data moves); abort the communicator");
}

void HostPrims::copyOut(void* dst, const void* src, size_t bytes, bool nonTemporal) {
  if (dst == src) return;
  reduce::copyBytes(dst, src, bytes, nonTemporal);
}

void HostPrims::reduceInto(char* dst, const char* local, const void* const* slots, size_t m, bool postOp) {
  reduce::ReduceParams first = cfg_.premul;
  reduce::ReduceParams rest;  // later merges add received partial sums: no premultiplier
  if (postOp) (peers_.nrecv == 1 ? first : rest).postDiv = cfg_.postDiv;
  cfg_.kernels->reduce(dst, local, slots[0], m, first);
  for (int i = 1; i < peers_.nrecv; ++i) {
    reduce::ReduceParams p = rest;
    if (i != peers_.nrecv - 1) p.postDiv = 1;
    cfg_.kernels->reduce(dst, dst, slots[i], m, p);
  }
}

const char* HostPrims::refSource(Src src, size_t inOff, bool toOutput, size_t outOff, bool postOp, bool* early) const {
  const char* in = static_cast<const char*>(cfg_.input) + inOff * cfg_.eltSize;
  const char* out = static_cast<const char*>(cfg_.output) + outOff * cfg_.eltSize;
  // The input goes out unchanged: no premultiplier, and no post-divisor on the output it may also be copied to.
  const bool inputAsIs = src == kFromInput && cfg_.inputRefs && inputUnscaled(toOutput && postOp);
  *early = inputAsIs || src == kFromOutput;
  if (inputAsIs) return in;
  if (src == kFromOutput || toOutput) return out;
  return nullptr;  // reduced into the slots (recvReduceSend), or premultiplied on the way
}

void HostPrims::checkWord(int i, uint64_t word, size_t left) const {
  const size_t elt = cfg_.eltSize;
  const size_t slice = std::min(peers_.sliceElems, left) * elt;
  if (!transport::isRemoteRef(word)) {
    const uint64_t want = transport::slotWord(slice, cfg_.slotTag);
    if (word != want) mismatch(i, word, want);
    return;
  }
  // A reference covers whole slots' worth up to the call's end, so that slices stay on multiples of the slot.
  const size_t bytes = word & transport::kSlotBytesMask;
  const bool fits = bytes > 0 && bytes % elt == 0 && bytes <= left * elt &&
                    (bytes == left * elt || bytes % (peers_.sliceElems * elt) == 0);
  if (!fits || (word >> 32) != cfg_.slotTag) {
    mismatch(i, word, transport::slotWord(slice, cfg_.slotTag));
  }
}

bool HostPrims::inputUnscaled(bool postDivided) const {
  return cfg_.premul.premul == 1.0 && cfg_.premul.postDiv == 1 && !(postDivided && cfg_.postDiv != 1);
}

bool HostPrims::streamsCopy(Src src, bool postOp) const {
  return src == kFromRecv || (src == kFromInput && inputUnscaled(postOp));
}

void HostPrims::compute(Src src, char* primary, bool primaryIsOutput, const char* inPtr, const char* outPtr,
                        const void* const* slots, size_t m, bool postOp) {
  const size_t bytes = m * cfg_.eltSize;
  switch (src) {
    case kFromInput: {
      if (inputUnscaled(postOp && primaryIsOutput)) {
        copyOut(primary, inPtr, bytes, streamsTo(primaryIsOutput));
      } else {
        reduce::ReduceParams p = cfg_.premul;
        if (postOp && primaryIsOutput) p.postDiv = cfg_.postDiv;
        cfg_.kernels->scale(primary, inPtr, m, p);
      }
      break;
    }
    case kFromOutput: copyOut(primary, outPtr, bytes, streamsTo(false)); break;
    case kFromRecv: copyOut(primary, slots[0], bytes, streamsTo(primaryIsOutput)); break;
    case kReduceInputRecv: reduceInto(primary, inPtr, slots, m, postOp); break;
    case kReduceRecvOutput: {
      // What arrived was premultiplied by its sender; the output holds the partial result.
      reduce::ReduceParams p;
      if (postOp) p.postDiv = cfg_.postDiv;
      cfg_.kernels->reduce(primary, slots[0], primary, m, p);
      break;
    }
    case kReduceInputOutput: {
      reduce::ReduceParams p = cfg_.premul;
      if (postOp) p.postDiv = cfg_.postDiv;
      cfg_.kernels->reduce(primary, inPtr, primary, m, p);
      break;
    }
  }
}

void HostPrims::run(Src src, size_t inOff, bool toOutput, size_t outOff, bool toPeers, size_t n, bool postOp) {
  if (n * cfg_.eltSize <= transport::kMailboxBytes) {
    runSmall(src, inOff, toOutput, outOff, toPeers, n, postOp);
  } else {
    runSlices(src, inOff, toOutput, outOff, toPeers, n, postOp);
  }
}

void HostPrims::runSmall(Src src, size_t inOff, bool toOutput, size_t outOff, bool toPeers, size_t n, bool postOp) {
  // One slice; a mailbox line (transport/fifo.h) on every connection that has one (both ends decide alike from the
  // call's size), a slot on the others. Never a reference: it would cost the receiver a system call.
  const size_t elt = cfg_.eltSize;
  const size_t bytes = n * elt;
  const bool needRecv = src == kFromRecv || src == kReduceInputRecv || src == kReduceRecvOutput;
  const int nsend = toPeers ? peers_.nsend : 0;
  const WaitContext& ctx = *cfg_.ctx;
  const void* slots[kMaxRecvPeers];
  if (needRecv) {
    for (int i = 0; i < peers_.nrecv; ++i) {
      uint64_t word = 0;
      slots[i] = peers_.recv[i]->mailbox() ? peers_.recv[i]->mailboxPeekWord(&word, ctx)
                                           : peers_.recv[i]->peekWord(&word, ctx);
      checkWord(i, word, n);
    }
  }
  char* dstSlots[kMaxSendPeers];
  for (int i = 0; i < nsend; ++i) {
    dstSlots[i] = static_cast<char*>(peers_.send[i]->mailbox() ? peers_.send[i]->mailboxAcquire(ctx)
                                                               : peers_.send[i]->acquire(ctx));
  }
  char* outPtr = toOutput ? static_cast<char*>(cfg_.output) + outOff * elt : nullptr;
  char* primary = outPtr != nullptr ? outPtr : dstSlots[0];
  compute(src, primary, outPtr != nullptr, static_cast<const char*>(cfg_.input) + inOff * elt,
          static_cast<const char*>(cfg_.output) + outOff * elt, slots, n, postOp);
  for (int i = 0; i < nsend; ++i) {
    if (dstSlots[i] != primary) copyOut(dstSlots[i], primary, bytes, false);
    if (peers_.send[i]->mailbox()) {
      peers_.send[i]->mailboxPost(bytes, cfg_.slotTag);
    } else {
      peers_.send[i]->post(bytes, cfg_.slotTag);
    }
  }
  if (needRecv) {
    for (int i = 0; i < peers_.nrecv; ++i) {
      if (peers_.recv[i]->mailbox()) {
        peers_.recv[i]->mailboxRelease();
      } else {
        peers_.recv[i]->release();
      }
    }
  }
}

void HostPrims::runSlices(Src src, size_t inOff, bool toOutput, size_t outOff, bool toPeers, size_t n, bool postOp) {
  const size_t elt = cfg_.eltSize;
  const char* in = static_cast<const char*>(cfg_.input);
  char* out = static_cast<char*>(cfg_.output);
  const bool needRecv = src == kFromRecv || src == kReduceInputRecv || src == kReduceRecvOutput;
  const bool reduces = src == kReduceInputRecv || src == kReduceRecvOutput;
  const int nsend = toPeers ? peers_.nsend : 0;
  const WaitContext& ctx = *cfg_.ctx;

  // Which send peers get references, to what.
  bool early = false;
  const char* refBase =
      nsend > 0 && cfg_.singleCopy ? refSource(src, inOff, toOutput, outOff, postOp, &early) : nullptr;
  const bool refable = refBase != nullptr && (!cfg_.mappedRefsOnly || findSharedAlloc(refBase, n * elt));
  bool ref[kMaxSendPeers];
  int ndata = 0;  // send peers that get the bytes in their slots
  for (int i = 0; i < nsend; ++i) {
    ref[i] = refable && peers_.send[i]->remoteRefs();
    if (!ref[i]) ++ndata;
  }
  Held held[kMaxRecvPeers];
  if (needRecv) {
    for (int i = 0; i < peers_.nrecv; ++i) held[i].slot = nullptr;
  }

  for (size_t done = 0; done < n;) {
    // The slice: one slot where a slot carries it; otherwise as far as the references received reach.
    size_t m = n - done;
    if (ndata > 0) m = std::min(m, peers_.sliceElems);
    bool refIn = false;
    if (needRecv) {
      for (int i = 0; i < peers_.nrecv; ++i) {
        Held& h = held[i];
        if (h.slot == nullptr) {
          h.slot = peers_.recv[i]->peekWord(&h.word, ctx);
          h.used = 0;
          checkWord(i, h.word, n - done);
        }
        m = std::min(m, ((h.word & transport::kSlotBytesMask) - h.used) / elt);
        refIn |= transport::isRemoteRef(h.word);
      }
      // Received references to reduce are copied into a scratch per peer that stays in cache.
      if (refIn && reduces) m = std::min(m, peers_.sliceElems * kRefScratchSlots);
    }
    const size_t bytes = m * elt;
    char* outPtr = toOutput ? out + (outOff + done) * elt : nullptr;
    const char* inPtr = in + (inOff + done) * elt;

    // References to bytes that are in place already go out first: the receivers start while this rank works.
    if (early) {
      for (int i = 0; i < nsend; ++i) {
        if (!ref[i]) continue;
        peers_.send[i]->acquire(ctx);
        peers_.send[i]->postRemote(refBase + done * elt, bytes, cfg_.slotTag);
        cfg_.ledger->add(peers_.send[i]);
      }
    }
    char* dstSlots[kMaxSendPeers];
    char* firstSlot = nullptr;
    for (int i = 0; i < nsend; ++i) {
      if (ref[i] && early) continue;
      dstSlots[i] = static_cast<char*>(peers_.send[i]->acquire(ctx));
      if (!ref[i] && firstSlot == nullptr) firstSlot = dstSlots[i];
    }

    // Compute into the first destination (nothing to compute when every peer gets a reference to bytes in
    // place), then copy to the other slots. An output that a copy writes with streaming stores comes last, from the
    // first data slot: copied into first, it would send its lines to memory and the slot copies read them back.
    // A copy from an input in place writes no output at all.
    // Where the slots stream too, every destination of a copy is written from the copy's source instead: a line
    // written with streaming stores is read back from memory.
    const bool copies = firstSlot != nullptr && (streamsCopy(src, postOp) || src == kFromOutput);
    const bool fromSource = copies && cfg_.nonTemporalSlots;
    const bool outputLast =
        outPtr != nullptr && copies && !fromSource && cfg_.nonTemporalOutput && !(src == kFromInput && inPtr == outPtr);
    char* primary = outPtr != nullptr && !outputLast ? outPtr : firstSlot;
    const bool primaryIsOutput = primary == outPtr && outPtr != nullptr;
    const void* slots[kMaxRecvPeers];
    if (needRecv) {
      for (int i = 0; i < peers_.nrecv; ++i) {
        const Held& h = held[i];
        if (!transport::isRemoteRef(h.word)) {
          slots[i] = h.slot;
        } else if (src == kFromRecv && primary != nullptr) {
          peers_.recv[i]->readRemote(h.slot, h.used, primary, bytes);  // straight into place
          slots[i] = primary;
        } else {
          char* scratch = refScratch(peers_.sliceElems * kRefScratchSlots * elt, i);
          peers_.recv[i]->readRemote(h.slot, h.used, scratch, bytes);
          slots[i] = scratch;
        }
      }
    }
    if (primary != nullptr) {
      compute(src, primary, primaryIsOutput, inPtr, out + (outOff + done) * elt, slots, m, postOp);
    }
    const char* copySource = primary;
    if (fromSource) {
      copySource = src == kFromRecv    ? static_cast<const char*>(slots[0])
                   : src == kFromInput ? inPtr
                                       : out + (outOff + done) * elt;
    }
    for (int i = 0; i < nsend; ++i) {
      if (ref[i]) continue;
      if (dstSlots[i] != primary) copyOut(dstSlots[i], copySource, bytes, cfg_.nonTemporalSlots);
      peers_.send[i]->post(bytes, cfg_.slotTag);
    }
    // The peers read the slot meanwhile (this end writes it again only once it is acquired again); references to the
    // output go out only once the output holds the slice.
    if (outputLast) copyOut(outPtr, primary, bytes, /*nonTemporal=*/true);
    if (!early) {
      for (int i = 0; i < nsend; ++i) {
        if (!ref[i]) continue;
        peers_.send[i]->postRemote(refBase + done * elt, bytes, cfg_.slotTag);
        cfg_.ledger->add(peers_.send[i]);
      }
    }
    if (needRecv) {
      for (int i = 0; i < peers_.nrecv; ++i) {
        Held& h = held[i];
        h.used += bytes;
        if (h.used == (h.word & transport::kSlotBytesMask)) {
          peers_.recv[i]->release();
          h.slot = nullptr;
        }
      }
    }
    done += m;
  }
}

}  // namespace chorus::coll
