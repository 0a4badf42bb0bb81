// The kernels of the CUDA executor: one collective kernel and one point-to-point kernel per element type,
// each CUDA block driving one channel (or one point-to-point queue). The algorithm is a run-time switch over
// the one-source templates of collectives/algo, and the reduction op a run-time switch inside
// reduce_device.h, so a type costs two kernels, not one per (collective, algorithm, op): that keeps nvcc's
// time for the whole executor within a few minutes.
//
// Each kernels_<group>.cu instantiates the types of its group with CHORUS_DEVICE_KERNELS(kType) (the list is
// device_kernel_table.h's); device_kernel_table.cu collects the launchers into the table the host uses.
#pragma once

#include <cuda_runtime.h>

#include "collectives/algo/direct.h"
#include "collectives/algo/ring_allgather.h"
#include "collectives/algo/ring_allreduce.h"
#include "collectives/algo/ring_broadcast.h"
#include "collectives/algo/ring_reduce.h"
#include "collectives/algo/ring_reducescatter.h"
#include "collectives/algo/tree_allreduce.h"
#include "collectives/algo/tree_broadcast.h"
#include "collectives/algo/tree_reduce.h"
#include "collectives/device/device_kernel_table.h"
#include "collectives/device/device_prims.cuh"

namespace chorus::coll::device {

// The direct algorithms' peer set (primitives.h) inside the one block of a direct launch.
template <reduce::DType kT>
class DevDirectPeerSet {
 public:
  __device__ DevDirectPeerSet(const DevCollLaunch& L, DevBlockReport* report, volatile int* stop)
      : L_(L), report_(report), stop_(stop) {}
  __device__ DevicePrims<kT> peer(int r) const {
    // A DevicePrims reads its FIFO counters when it is made, and thread 0 published the last call's: the barrier
    // makes that visible to every thread before they read.
    __syncthreads();
    DevPeers p;
    if (r != L_.args.rank) {
      // Only the directions the operation carries data in are connected (device_executor.cc).
      p.recv[0] = L_.direct.recv[r];
      p.send[0] = L_.direct.send[r];
      p.nrecv = p.recv[0].ctrl != nullptr ? 1 : 0;
      p.nsend = p.send[0].ctrl != nullptr ? 1 : 0;
    }
    return DevicePrims<kT>(p, r == L_.args.rank ? L_.ownInput : L_.input, L_.output, L_.red, L_.abortFlag, report_,
                           stop_);
  }

 private:
  const DevCollLaunch& L_;
  DevBlockReport* report_;
  volatile int* stop_;
};

template <reduce::DType kT>
__global__ void __launch_bounds__(kDevThreadsPerBlock) collKernel(const __grid_constant__ DevCollLaunch L) {
  __shared__ int stop;
  if (threadIdx.x == 0) stop = 0;
  __syncthreads();
  const int ch = static_cast<int>(blockIdx.x);
  const DevChannelWork& w = L.channels[ch];
  CollArgs a = L.args;
  a.channel = ch;
  a.ring = w.ring;
  a.ringIndex = w.ringIndex;
  a.treeParent = w.treeParent;
  a.treeNChildren = w.treeNChildren;
  DevBlockReport* report = L.reports == nullptr ? nullptr : L.reports + ch;
  DevicePrims<kT> up(w.up, L.input, L.output, L.red, L.abortFlag, report, &stop);
  switch (L.kind) {
    case kDevRingAllReduce: runRingAllReduce(up, a); break;
    case kDevRingAllGather: runRingAllGather(up, a); break;
    case kDevRingReduceScatter: runRingReduceScatter(up, a); break;
    case kDevRingBroadcast: runRingBroadcast(up, a); break;
    case kDevRingReduce: runRingReduce(up, a); break;
    case kDevTreeAllReduce: {
      DevicePrims<kT> down(w.down, L.input, L.output, L.red, L.abortFlag, report, &stop);
      runTreeAllReduce(up, down, a);
      break;
    }
    case kDevTreeBroadcast: {
      DevicePrims<kT> down(w.down, L.input, L.output, L.red, L.abortFlag, report, &stop);
      runTreeBroadcast(down, a);
      break;
    }
    case kDevTreeReduce: runTreeReduce(up, a); break;
    case kDevDirectAllReduce:
    case kDevDirectAllGather:
    case kDevDirectReduceScatter:
    case kDevDirectBroadcast:
    case kDevDirectReduce: {
      DevDirectPeerSet<kT> d(L, report, &stop);
      if (L.kind == kDevDirectAllReduce) runDirectAllReduce(d, a);
      if (L.kind == kDevDirectAllGather) runDirectAllGather(d, a);
      if (L.kind == kDevDirectReduceScatter) runDirectReduceScatter(d, a);
      if (L.kind == kDevDirectBroadcast) runDirectBroadcast(d, a);
      if (L.kind == kDevDirectReduce) runDirectReduce(d, a);
      break;
    }
    default: break;
  }
}

// Point-to-point: block q moves its part of its queue's tasks, in order, through its lane's connection (bytes as
// uint8).
template <reduce::DType kT>
__global__ void __launch_bounds__(kDevThreadsPerBlock) p2pKernel(const __grid_constant__ DevP2pLaunch L) {
  __shared__ int stop;
  if (threadIdx.x == 0) stop = 0;
  __syncthreads();
  const DevP2pQueue& q = L.queues[blockIdx.x];
  DevPeers peers;
  if (q.send) {
    peers.send[0] = q.conn;
    peers.nsend = 1;
  } else {
    peers.recv[0] = q.conn;
    peers.nrecv = 1;
  }
  DevBlockReport* report = L.reports == nullptr ? nullptr : L.reports + blockIdx.x;
  for (int t = q.firstTask; t < q.firstTask + q.ntasks; ++t) {
    const DevP2pTask& task = L.tasks[t];
    // A DevicePrims reads the FIFO counters when it is made, and thread 0 published the last task's: the barrier
    // makes that visible to every thread first (else some would fill or read the last task's slot).
    __syncthreads();
    DevicePrims<kT> p(peers, task.src, task.dst, DevReduceParams{}, L.abortFlag, report, &stop);
    const DevP2pPart part = devP2pPart(task.bytes, q.part, q.parts);
    if (q.send) {
      p.send(part.begin, part.end - part.begin);
    } else {
      p.recv(part.begin, part.end - part.begin);
    }
    if (p.stopped()) return;
  }
}

// Defines the host launchers of type kType (declared in device_kernel_table.h).
#define CHORUS_DEVICE_KERNELS(kType)                                                 \
  cudaError_t launchColl_##kType(const DevCollLaunch& l, cudaStream_t s) {           \
    collKernel<reduce::DType::kType><<<l.nChannels, kDevThreadsPerBlock, 0, s>>>(l); \
    return cudaGetLastError();                                                       \
  }                                                                                  \
  const void* collKernelSymbol_##kType() {                                           \
    return reinterpret_cast<const void*>(&collKernel<reduce::DType::kType>);         \
  }

#define CHORUS_DEVICE_P2P_KERNEL()                                                 \
  cudaError_t launchP2p(const DevP2pLaunch& l, cudaStream_t s) {                   \
    p2pKernel<reduce::DType::kUint8><<<l.nqueues, kDevThreadsPerBlock, 0, s>>>(l); \
    return cudaGetLastError();                                                     \
  }                                                                                \
  const void* p2pKernelSymbol() {                                                  \
    return reinterpret_cast<const void*>(&p2pKernel<reduce::DType::kUint8>);       \
  }

}  // namespace chorus::coll::device
