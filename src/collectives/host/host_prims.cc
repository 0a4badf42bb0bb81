#include "collectives/host/host_prims.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "collectives/slot_tag.h"

namespace chorus::coll {

HostPrims::HostPrims(const HostPrimsConfig& cfg, transport::RecvConnection* const* recvs, int nrecv,
                     transport::SendConnection* const* sends, int nsend)
    : cfg_(cfg), nrecv_(nrecv), nsend_(nsend) {
  CHORUS_ENFORCE(nrecv <= kMaxRecvPeers && nsend <= kMaxSendPeers, "too many peers");
  size_t slot = 0;
  for (int i = 0; i < nrecv; ++i) {
    recvs_[i] = recvs[i];
    slot = slot == 0 ? recvs[i]->slotBytes() : std::min(slot, recvs[i]->slotBytes());
  }
  for (int i = 0; i < nsend; ++i) {
    sends_[i] = sends[i];
    slot = slot == 0 ? sends[i]->slotBytes() : std::min(slot, sends[i]->slotBytes());
  }
  sliceElems_ = slot == 0 ? SIZE_MAX : std::max<size_t>(slot / cfg.eltSize, 1);
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
  CHORUS_THROW(Status::kRemoteError, recvs_[i]->what(), ": the peer sent ",
               describeSlotTag(static_cast<uint32_t>(got >> 32)), " with ", got & transport::kSlotBytesMask,
               " bytes where this rank runs ", describeSlotTag(static_cast<uint32_t>(want >> 32)), " and expects ",
               want & transport::kSlotBytesMask,
               ": ranks called different collectives, types, operations, roots or counts, or in a different order",
               " (CHORUS_CHECK=1 names the differing fields before any data moves); abort the communicator");
}

void HostPrims::copyOut(void* dst, const void* src, size_t bytes, bool finalOutput) {
  if (dst == src) return;
  reduce::copyBytes(dst, src, bytes, finalOutput && cfg_.nonTemporalOutput);
}

void HostPrims::reduceInto(char* dst, const char* local, const void* const* slots, size_t m, bool postOp) {
  reduce::ReduceParams first = cfg_.premul;
  reduce::ReduceParams rest;  // later merges add received partial sums: no premultiplier
  if (postOp) (nrecv_ == 1 ? first : rest).postDiv = cfg_.postDiv;
  cfg_.kernels->reduce(dst, local, slots[0], m, first);
  for (int i = 1; i < nrecv_; ++i) {
    reduce::ReduceParams p = rest;
    if (i != nrecv_ - 1) p.postDiv = 1;
    cfg_.kernels->reduce(dst, dst, slots[i], m, p);
  }
}

void HostPrims::run(Src src, size_t inOff, bool toOutput, size_t outOff, bool toPeers, size_t n, bool postOp) {
  const size_t elt = cfg_.eltSize;
  const char* in = static_cast<const char*>(cfg_.input);
  char* out = static_cast<char*>(cfg_.output);
  const bool needRecv = src == kFromRecv || src == kReduceInputRecv || src == kReduceRecvOutput;
  const int nsend = toPeers ? nsend_ : 0;
  const WaitContext& ctx = *cfg_.ctx;
  for (size_t done = 0; done < n;) {
    const size_t m = std::min(sliceElems_, n - done);
    const size_t bytes = m * elt;
    const void* slots[kMaxRecvPeers];
    if (needRecv) {
      const uint64_t want = transport::slotWord(bytes, cfg_.slotTag);
      for (int i = 0; i < nrecv_; ++i) {
        uint64_t got = 0;
        slots[i] = recvs_[i]->peekWord(&got, ctx);
        if (got != want && !(recvs_[i]->bytesOnly() && (got & transport::kSlotBytesMask) == bytes)) {
          mismatch(i, got, want);
        }
      }
    }
    char* dstSlots[kMaxSendPeers];
    for (int i = 0; i < nsend; ++i) dstSlots[i] = static_cast<char*>(sends_[i]->acquire(ctx));

    // Compute into the first destination, then copy to the others.
    char* outPtr = toOutput ? out + (outOff + done) * elt : nullptr;
    char* primary = outPtr != nullptr ? outPtr : (nsend > 0 ? dstSlots[0] : nullptr);
    const char* inPtr = in + (inOff + done) * elt;
    const bool primaryIsOutput = primary == outPtr && outPtr != nullptr;
    switch (src) {
      case kFromInput: {
        reduce::ReduceParams p = cfg_.premul;
        if (postOp && primaryIsOutput) p.postDiv = cfg_.postDiv;
        if (p.premul == 1.0 && p.postDiv == 1) {
          copyOut(primary, inPtr, bytes, primaryIsOutput);
        } else {
          cfg_.kernels->scale(primary, inPtr, m, p);
        }
        break;
      }
      case kFromOutput: copyOut(primary, out + (outOff + done) * elt, bytes, false); break;
      case kFromRecv: copyOut(primary, slots[0], bytes, primaryIsOutput); break;
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
    for (int i = 0; i < nsend; ++i) {
      if (dstSlots[i] != primary) copyOut(dstSlots[i], primary, bytes, false);
    }
    for (int i = 0; i < nsend; ++i) sends_[i]->post(bytes, cfg_.slotTag);
    if (needRecv) {
      for (int i = 0; i < nrecv_; ++i) recvs_[i]->release();
    }
    done += m;
  }
}

}  // namespace chorus::coll
