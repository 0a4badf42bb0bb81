// What one kernel launch of the CUDA executor receives, by value (CUDA 12.1+ allows 32 KiB of kernel
// parameters on sm_70 and newer). Plain data shared by the host side that fills it (device_executor.cc) and
// the kernels (device_kernel.cuh).
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/conn_key.h"
#include "collectives/device/reduce_device.h"
#include "collectives/plan/plan.h"
#include "collectives/primitives.h"
#include "transport/cuda/device_fifo.h"

namespace chorus::coll::device {

using transport::cuda::DevConn;
using transport::cuda::DevFifoControl;
using transport::cuda::kDevFifoSlots;

// The connections of one Primitives object on one channel.
struct DevPeers {
  DevConn recv[kMaxRecvPeers];
  DevConn send[kMaxSendPeers];
  int nrecv = 0;
  int nsend = 0;
};

// One channel (one CUDA block) of a collective launch.
struct DevChannelWork {
  DevPeers up;                // ring: prev -> next; tree: children -> parent
  DevPeers down;              // tree: parent -> children (unused by rings)
  const int* ring = nullptr;  // device memory: this channel's ring order (nranks entries)
  int ringIndex = 0;
  int treeParent = -1;
  int treeNChildren = 0;
};

// Kernel status words (in mapped host memory, one per block): 0 while running or done, else why it stopped.
enum DevStatus : uint32_t {
  kDevOk = 0,
  kDevAborted = 1,       // the communicator's abort flag was raised (chorusCommAbort, or the watchdog)
  kDevSizeMismatch = 2,  // a received slot held a different size than expected: mismatched calls
  kDevPeerClosed = 3,    // the host closed a FIFO (its peer died)
};

// What the kernel reports back to the host while it runs: mapped host memory, written by thread 0.
struct DevBlockReport {
  uint64_t progress;  // slices moved so far in this launch (the watchdog compares successive reads)
  uint32_t status;    // DevStatus
  uint32_t pad;
};

// Which algorithm body a collective launch runs.
enum DevAlgoKind : int {
  kDevRingAllReduce = 0,
  kDevRingAllGather = 1,
  kDevRingReduceScatter = 2,
  kDevRingBroadcast = 3,
  kDevRingReduce = 4,
  kDevTreeAllReduce = 5,
  kDevTreeBroadcast = 6,
  kDevTreeReduce = 7,
  kDevDirectAllReduce = 8,
  kDevDirectAllGather = 9,
  kDevDirectReduceScatter = 10,
  kDevDirectBroadcast = 11,
  kDevDirectReduce = 12,
  kDevNumAlgoKinds = 13,
};

// The peers of a direct collective (one block): lane 0 to every rank (this rank's entries unused).
struct DevDirectPeers {
  DevConn send[kMaxDirectRanks];
  DevConn recv[kMaxDirectRanks];
};

struct DevCollLaunch {
  DevChannelWork channels[kMaxChannels];
  int nChannels = 1;
  int kind = kDevRingAllReduce;
  CollArgs args;  // channel, ring, ringIndex and tree fields are filled per block from channels[]
  const void* input = nullptr;
  void* output = nullptr;
  const void* ownInput = nullptr;  // direct: what this rank's own Primitives reads (a staging copy in place)
  DevReduceParams red;
  const volatile uint32_t* abortFlag = nullptr;  // device view of the communicator's mapped abort word
  DevBlockReport* reports = nullptr;             // device view of nChannels mapped reports
  DevDirectPeers direct;                         // direct kinds only
};

// Point-to-point launches (all-to-all, gather, scatter, send/recv): one block per lane of each (peer, direction)
// queue (plan.h: P2pQueue::lanes); each block moves its part of every task of its queue, in order, through its
// lane's connection, so sends and receives never wait on each other. At most 2 (nranks - 1) queues, whose lanes
// the plan keeps within kDevBlockBudget blocks where nranks allows (plan.cc: p2pLanesFor).
constexpr int kDevMaxP2pQueues = 128;
constexpr int kDevMaxP2pTasks = 256;

struct DevP2pTask {
  const void* src = nullptr;  // send: the user's data
  void* dst = nullptr;        // recv: where it lands
  uint64_t bytes = 0;
};

struct DevP2pQueue {
  DevConn conn;
  int send = 1;
  int firstTask = 0;
  int ntasks = 0;
  int part = 0;   // this block's part of each task
  int parts = 1;  // the queue's lanes
};

// Bytes [begin, end) of a transfer of `bytes` that part `part` of `parts` carries: cuts on 16 bytes, so that each
// part's copy is vectorized; the last part takes the rest. Sender and receiver cut alike.
struct DevP2pPart {
  uint64_t begin;
  uint64_t end;
};
CHORUS_HOST_DEVICE DevP2pPart devP2pPart(uint64_t bytes, int part, int parts) {
  auto cut = [&](int k) -> uint64_t {
    return k >= parts ? bytes : (bytes / static_cast<uint64_t>(parts) * static_cast<uint64_t>(k)) & ~uint64_t(15);
  };
  return DevP2pPart{cut(part), cut(part + 1)};
}

struct DevP2pLaunch {
  DevP2pQueue queues[kDevMaxP2pQueues];
  DevP2pTask tasks[kDevMaxP2pTasks];
  int nqueues = 0;
  const volatile uint32_t* abortFlag = nullptr;
  DevBlockReport* reports = nullptr;  // nqueues entries
};

static_assert(sizeof(DevCollLaunch) <= 32000, "kernel parameters are limited to 32764 bytes");
static_assert(sizeof(DevP2pLaunch) <= 32000, "kernel parameters are limited to 32764 bytes");

}  // namespace chorus::coll::device
