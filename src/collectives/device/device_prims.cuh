// DevicePrims: the Primitives contract (collectives/primitives.h) inside a CUDA block, over device FIFOs
// (device_fifo.h), NCCL's Simple protocol. The host counterpart is host/host_prims.{h,cc}; the structure is
// the same: each call is cut into slices of one FIFO slot, and for each slice
//
//   1. thread 0 waits for a published slot from every receive peer (tail > head) and a free slot at every
//      send peer (tail - head < nslots), polling the communicator's abort flag (mapped host memory) and the
//      FIFOs' closed words while it spins;
//   2. the block barriers, then every thread computes its share straight from the received slots into the
//      output and/or the send slots, with 16-byte vector loads and stores (reduce_device.h);
//   3. the block barriers, then thread 0 stores each send slot's size, fences at system scope and publishes
//      the slots (tail + 1, release), frees the received ones (head + 1), and bumps the block's progress
//      counter for the host watchdog (written, never read back per slice: it lives in host memory).
//
// Every thread of the block runs the algorithm's control flow and keeps its own copy of the step counters,
// so they agree without shared memory; only the "stop" decision of thread 0 is broadcast through shared
// memory. After a stop every later call returns at once and the kernel ends (the host reports why).
#pragma once

#include <cuda/atomic>

#include <cstddef>
#include <cstdint>

#include "collectives/device/device_launch_args.h"
#include "collectives/device/reduce_device.h"
#include "collectives/primitives.h"

namespace chorus::coll::device {

using SysAtomicU64 = cuda::atomic_ref<uint64_t, cuda::thread_scope_system>;

// Polls between reads of the abort flag (a PCIe read when it lives in host memory).
constexpr uint32_t kAbortPollInterval = 256;

template <reduce::DType kT>
class DevicePrims {
 public:
  using S = typename DevType<kT>::S;

  // `stop` points at a __shared__ word the block's threads share; `report` at this block's mapped report.
  __device__ DevicePrims(const DevPeers& peers, const void* input, void* output, const DevReduceParams& red,
                         const volatile uint32_t* abortFlag, DevBlockReport* report, volatile int* stop)
      : peers_(peers),
        in_(static_cast<const S*>(input)),
        out_(static_cast<S*>(output)),
        red_(red),
        abort_(abortFlag),
        report_(report),
        stop_(stop) {
    uint64_t slot = 0;
    for (int i = 0; i < peers_.nrecv; ++i) {
      slot = slot == 0 ? peers_.recv[i].slotBytes : min(slot, peers_.recv[i].slotBytes);
      recvStep_[i] = SysAtomicU64(peers_.recv[i].ctrl->head).load(cuda::memory_order_relaxed);
    }
    for (int i = 0; i < peers_.nsend; ++i) {
      slot = slot == 0 ? peers_.send[i].slotBytes : min(slot, peers_.send[i].slotBytes);
      sendStep_[i] = SysAtomicU64(peers_.send[i].ctrl->tail).load(cuda::memory_order_relaxed);
    }
    sliceElems_ = slot == 0 ? ~size_t(0) : max(static_cast<size_t>(slot / sizeof(S)), size_t(1));
  }

  __device__ void send(size_t inOff, size_t n) { run(kFromInput, inOff, false, 0, true, n, false); }
  __device__ void sendFromOutput(size_t outOff, size_t n) { run(kFromOutput, 0, false, outOff, true, n, false); }
  __device__ void recv(size_t outOff, size_t n) { run(kFromRecv, 0, true, outOff, false, n, false); }
  __device__ void recvReduceSend(size_t inOff, size_t n) { run(kReduceInputRecv, inOff, false, 0, true, n, false); }
  __device__ void recvReduceCopy(size_t inOff, size_t outOff, size_t n, bool postOp) {
    run(kReduceInputRecv, inOff, true, outOff, false, n, postOp);
  }
  __device__ void recvReduceCopySend(size_t inOff, size_t outOff, size_t n, bool postOp) {
    run(kReduceInputRecv, inOff, true, outOff, true, n, postOp);
  }
  __device__ void recvCopySend(size_t outOff, size_t n) { run(kFromRecv, 0, true, outOff, true, n, false); }
  __device__ void copySend(size_t inOff, size_t outOff, size_t n, bool postOp) {
    run(kFromInput, inOff, true, outOff, true, n, postOp);
  }
  __device__ void localCopy(size_t inOff, size_t outOff, size_t n, bool postOp) {
    run(kFromInput, inOff, true, outOff, false, n, postOp);
  }
  __device__ void recvReduceOutput(size_t outOff, size_t n, bool postOp) {
    run(kReduceRecvOutput, 0, true, outOff, false, n, postOp);
  }
  __device__ void localReduce(size_t inOff, size_t outOff, size_t n, bool postOp) {
    run(kReduceInputOutput, inOff, true, outOff, false, n, postOp);
  }

  __device__ bool stopped() const { return *stop_ != 0; }

 private:
  enum Src : int { kFromInput, kFromOutput, kFromRecv, kReduceInputRecv, kReduceRecvOutput, kReduceInputOutput };

  // Thread 0: stops the block with `why` (first reason wins) and tells the host.
  __device__ void fail(uint32_t why) {
    if (report_ != nullptr && report_->status == kDevOk) {
      *reinterpret_cast<volatile uint32_t*>(&report_->status) = why;
      __threadfence_system();
    }
    *stop_ = 1;
  }

  // Thread 0: spins until *counter >= target (acquire), or returns false after fail().
  __device__ bool waitAtLeast(uint64_t* counter, uint64_t target, const DevFifoControl* ctrl) {
    SysAtomicU64 c(*counter);
    uint32_t spins = 0;
    while (c.load(cuda::memory_order_acquire) < target) {
      if (++spins == kAbortPollInterval) {
        spins = 0;
        if (abort_ != nullptr && *abort_ != 0) {
          fail(kDevAborted);
          return false;
        }
        if (*reinterpret_cast<const volatile uint32_t*>(&ctrl->closed) != 0) {
          fail(kDevPeerClosed);
          return false;
        }
      }
    }
    return true;
  }

  // Thread 0 waits for every peer of the slice; the block learns the outcome.
  __device__ bool waitSlice(bool needRecv, int nsend, uint64_t bytes) {
    if (threadIdx.x == 0 && *stop_ == 0) {
      bool ok = true;
      for (int i = 0; ok && needRecv && i < peers_.nrecv; ++i) {
        DevFifoControl* f = peers_.recv[i].ctrl;
        ok = waitAtLeast(&f->tail, recvStep_[i] + 1, f);
        if (ok) {
          const uint64_t got = *reinterpret_cast<const volatile uint64_t*>(&f->sizes[recvStep_[i] % kDevFifoSlots]);
          if (got != bytes) {
            fail(kDevSizeMismatch);
            ok = false;
          }
        }
      }
      for (int i = 0; ok && i < nsend; ++i) {
        DevFifoControl* f = peers_.send[i].ctrl;
        ok = waitAtLeast(&f->head, sendStep_[i] + 1 > kDevFifoSlots ? sendStep_[i] + 1 - kDevFifoSlots : 0, f);
      }
    }
    __syncthreads();
    return *stop_ == 0;
  }

  // Thread 0, after the block's data is written: publish the sends, free the receives.
  __device__ void finishSlice(bool needRecv, int nsend, uint64_t bytes) {
    __syncthreads();
    if (threadIdx.x == 0) {
      if (nsend > 0) __threadfence_system();  // the slot data, written by every thread, before the sizes
      for (int i = 0; i < nsend; ++i) {
        DevFifoControl* f = peers_.send[i].ctrl;
        *reinterpret_cast<volatile uint64_t*>(&f->sizes[sendStep_[i] % kDevFifoSlots]) = bytes;
      }
      for (int i = 0; i < nsend; ++i) {
        SysAtomicU64(peers_.send[i].ctrl->tail).store(sendStep_[i] + 1, cuda::memory_order_release);
      }
      for (int i = 0; needRecv && i < peers_.nrecv; ++i) {
        SysAtomicU64(peers_.recv[i].ctrl->head).store(recvStep_[i] + 1, cuda::memory_order_release);
      }
      if (report_ != nullptr) {
        // The counter lives in mapped host memory: read it once (a round trip over the bus), then only write
        // (posted, the thread does not wait).
        auto* p = reinterpret_cast<volatile uint64_t*>(&report_->progress);
        if (!progressRead_) {
          progress_ = *p;
          progressRead_ = true;
        }
        *p = ++progress_;
      }
    }
    for (int i = 0; i < nsend; ++i) ++sendStep_[i];
    for (int i = 0; needRecv && i < peers_.nrecv; ++i) ++recvStep_[i];
  }

  // Not inlined: every Primitives call of every algorithm body shares one copy per type (a fraction of nvcc's
  // time, and of the kernel's code size; one call per call, not per element).
  __device__ __noinline__ void run(Src src, size_t inOff, bool toOutput, size_t outOff, bool toPeers, size_t n,
                                   bool postOp) {
    const bool needRecv = src == kFromRecv || src == kReduceInputRecv || src == kReduceRecvOutput;
    const int nsend = toPeers ? peers_.nsend : 0;
    for (size_t done = 0; done < n;) {
      if (*stop_ != 0) return;
      const size_t m = min(sliceElems_, n - done);
      const uint64_t bytes = m * sizeof(S);
      if (!waitSlice(needRecv, nsend, bytes)) return;
      ReduceCopyArgs a;
      switch (src) {
        case kFromInput:
          a.srcs[a.nsrcs++] = in_ + inOff + done;
          a.premulFirst = true;
          break;
        case kFromOutput: a.srcs[a.nsrcs++] = out_ + outOff + done; break;
        case kFromRecv: a.srcs[a.nsrcs++] = slot(peers_.recv[0], recvStep_[0]); break;
        case kReduceInputRecv:
          a.srcs[a.nsrcs++] = in_ + inOff + done;
          a.premulFirst = true;
          for (int i = 0; i < peers_.nrecv; ++i) a.srcs[a.nsrcs++] = slot(peers_.recv[i], recvStep_[i]);
          break;
        case kReduceRecvOutput:  // the sender premultiplied what arrives; the output holds the partial result
          a.srcs[a.nsrcs++] = slot(peers_.recv[0], recvStep_[0]);
          a.srcs[a.nsrcs++] = out_ + outOff + done;
          break;
        case kReduceInputOutput:
          a.srcs[a.nsrcs++] = in_ + inOff + done;
          a.premulFirst = true;
          a.srcs[a.nsrcs++] = out_ + outOff + done;
          break;
      }
      // postOp applies to values that land in the output (and the same values go to the peers), as HostPrims.
      a.postOp = postOp && toOutput;
      if (toOutput) a.dsts[a.ndsts++] = out_ + outOff + done;
      for (int i = 0; i < nsend; ++i) a.dsts[a.ndsts++] = slot(peers_.send[i], sendStep_[i]);
      if (!(a.nsrcs == 1 && a.ndsts == 1 && a.srcs[0] == a.dsts[0] && !a.premulFirst)) {
        reduceCopy<kT>(a, red_, m, static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x));
      }
      finishSlice(needRecv, nsend, bytes);
      done += m;
    }
  }

  __device__ static S* slot(const DevConn& c, uint64_t step) {
    return reinterpret_cast<S*>(c.slots + static_cast<size_t>(step % kDevFifoSlots) * c.slotBytes);
  }

  DevPeers peers_;
  const S* in_;
  S* out_;
  DevReduceParams red_;
  const volatile uint32_t* abort_;
  DevBlockReport* report_;
  volatile int* stop_;
  uint64_t recvStep_[kMaxRecvPeers] = {};
  uint64_t sendStep_[kMaxSendPeers] = {};
  size_t sliceElems_ = 0;
  uint64_t progress_ = 0;  // thread 0: this block's progress counter, as last written
  bool progressRead_ = false;
};

}  // namespace chorus::coll::device
