#include "collectives/device/device_executor.h"

#include "chorus_build_config.h"

#if CHORUS_BUILD_CUDA

#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <memory>

#include "base/error.h"
#include "collectives/device/device_kernel_table.h"
#include "collectives/device/device_launch_args.h"

namespace chorus::coll::device {

namespace {

// The tree of channel `ch` rooted for `op`: host_executor.cc's rule (the searched tree with the labels of its
// root and the collective's root exchanged; all-reduce keeps the searched root).
struct RootedTree {
  int parent = -1;
  std::vector<int> children;
};

RootedTree opTree(const CollOp& op, const TopoView& topo, int rank, int ch) {
  const TreeView& t = topo.trees[ch % 2];
  const int root = op.type == CollType::kAllReduce ? t.root : op.root;
  auto swap = [&](int x) { return x == t.root ? root : x == root ? t.root : x; };
  RootedTree out;
  const int x = swap(rank);
  out.parent = t.parent[x] < 0 ? -1 : swap(t.parent[x]);
  for (int c : t.children[x]) out.children.push_back(swap(c));
  return out;
}

[[noreturn]] void throwLaunch(int err, const CollOp& op) {
  CHORUS_THROW(Status::kUnhandledCudaError, "launching the ", collName(op.type),
               " kernel failed: ", cudaGetErrorString(static_cast<cudaError_t>(err)));
}

}  // namespace

int algoKind(const CollOp& op) {
  const bool tree = op.algo == Algo::kTree;
  switch (op.type) {
    case CollType::kAllReduce: return tree ? kDevTreeAllReduce : kDevRingAllReduce;
    case CollType::kBroadcast: return tree ? kDevTreeBroadcast : kDevRingBroadcast;
    case CollType::kReduce: return tree ? kDevTreeReduce : kDevRingReduce;
    case CollType::kAllGather: return kDevRingAllGather;
    case CollType::kReduceScatter: return kDevRingReduceScatter;
    default: return -1;
  }
}

void launchCollective(const CollOp& op, const DevExecEnv& env, void* stream) {
  if (op.count == 0) return;
  const int kind = algoKind(op);
  CHORUS_ENFORCE(kind >= 0, "no device algorithm for ", collName(op.type));
  CHORUS_ENFORCE(op.nChannels >= 1 && op.nChannels <= kMaxChannels, "channel count ", op.nChannels);
  const bool tree = op.algo == Algo::kTree && env.nranks > 1;
  const bool floating = reduce::isFloating(op.dtype);
  const size_t elt = reduce::dtypeSize(op.dtype);

  auto* L = new DevCollLaunch();  // ~7 KiB: not on the caller's stack
  std::unique_ptr<DevCollLaunch> owner(L);
  L->nChannels = op.nChannels;
  L->kind = kind;
  L->input = op.sendbuff;
  L->output = op.recvbuff;
  L->red.op = static_cast<int>(op.op);
  if (op.op == reduce::Op::kAvg && floating) L->red.premul = 1.0 / env.nranks;
  if (op.op == reduce::Op::kAvg && !floating) L->red.postDiv = env.nranks;
  L->abortFlag = env.abortFlag;
  L->reports = env.reports;
  CollArgs& a = L->args;
  a.count = op.count;
  a.nranks = env.nranks;
  a.rank = env.rank;
  a.root = op.root;
  a.nChannels = op.nChannels;
  a.chunkElems = std::max<size_t>(op.chunkBytes / elt, 1);
  for (int ch = 0; ch < op.nChannels; ++ch) {
    DevChannelWork& w = L->channels[ch];
    if (tree) {
      RootedTree t = opTree(op, *env.topo, env.rank, ch);
      CHORUS_ENFORCE(t.children.size() <= static_cast<size_t>(kMaxRecvPeers), "tree node with too many children");
      w.treeParent = t.parent;
      w.treeNChildren = static_cast<int>(t.children.size());
      for (size_t i = 0; i < t.children.size(); ++i) {
        w.up.recv[i] = env.conns->devRecvConn(t.children[i], ch);
        w.down.send[i] = env.conns->devSendConn(t.children[i], ch);
      }
      w.up.nrecv = w.down.nsend = w.treeNChildren;
      if (t.parent >= 0) {
        w.up.send[0] = env.conns->devSendConn(t.parent, ch);
        w.down.recv[0] = env.conns->devRecvConn(t.parent, ch);
        w.up.nsend = w.down.nrecv = 1;
      }
      continue;
    }
    const auto& ring = env.topo->rings[ch];
    w.ring = env.deviceRings[ch];
    w.ringIndex = env.topo->ringIndex[ch];
    if (env.nranks > 1) {
      w.up.recv[0] = env.conns->devRecvConn(ring[(w.ringIndex + env.nranks - 1) % env.nranks], ch);
      w.up.send[0] = env.conns->devSendConn(ring[(w.ringIndex + 1) % env.nranks], ch);
      w.up.nrecv = w.up.nsend = 1;
    }
  }
  // grainElems stays 1, as in the host executor: every rank computes the same chunk grid from the same args.
  int n = 0;
  const DevKernelEntry* table = deviceKernelTable(&n);
  const DevKernelEntry* e = nullptr;
  for (int i = 0; i < n; ++i) {
    if (table[i].dtype == op.dtype) e = &table[i];
  }
  CHORUS_ENFORCE(e != nullptr, "no device kernel for ", reduce::dtypeName(op.dtype));
  const int err = e->launch(L, stream);
  if (err != 0) throwLaunch(err, op);
}

void launchP2p(const std::vector<P2pTask>& tasks, const DevExecEnv& env, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  std::vector<const P2pTask*> selfSends, selfRecvs;
  std::map<std::pair<int, bool>, std::vector<const P2pTask*>> queues;
  for (const P2pTask& t : tasks) {
    if (t.peer == env.rank) {
      (t.send ? selfSends : selfRecvs).push_back(&t);
    } else if (t.bytes > 0) {
      queues[{t.peer, t.send}].push_back(&t);
    }
  }
  CHORUS_CHECK_USAGE(selfSends.size() == selfRecvs.size(), "rank ", env.rank, " posted ", selfSends.size(),
                     " sends to itself but ", selfRecvs.size(), " receives from itself");
  for (size_t i = 0; i < selfSends.size(); ++i) {
    CHORUS_CHECK_USAGE(selfSends[i]->bytes == selfRecvs[i]->bytes, "rank ", env.rank, ": a send to itself of ",
                       selfSends[i]->bytes, " bytes meets a receive of ", selfRecvs[i]->bytes, " bytes");
    if (selfRecvs[i]->recvbuf != selfSends[i]->sendbuf && selfSends[i]->bytes > 0) {
      cudaError_t e = cudaMemcpyAsync(selfRecvs[i]->recvbuf, selfSends[i]->sendbuf, selfSends[i]->bytes,
                                      cudaMemcpyDeviceToDevice, s);
      if (e != cudaSuccess) CHORUS_THROW(Status::kUnhandledCudaError, "cudaMemcpyAsync: ", cudaGetErrorString(e));
    }
  }
  if (queues.empty()) return;
  CHORUS_CHECK_ARG(queues.size() <= static_cast<size_t>(kDevMaxP2pQueues), "a group with ", queues.size(),
                   " point-to-point peers and directions: the device executor takes at most ", kDevMaxP2pQueues);
  auto L = std::make_unique<DevP2pLaunch>();
  L->abortFlag = env.abortFlag;
  L->reports = env.reports;
  int nt = 0;
  for (auto& [key, list] : queues) {
    CHORUS_CHECK_ARG(nt + list.size() <= static_cast<size_t>(kDevMaxP2pTasks), "a group with more than ",
                     kDevMaxP2pTasks, " point-to-point transfers: the device executor takes at most that many");
    DevP2pQueue& q = L->queues[L->nqueues++];
    q.send = key.second ? 1 : 0;
    q.conn = key.second ? env.conns->devSendConn(key.first, kP2pLane) : env.conns->devRecvConn(key.first, kP2pLane);
    q.firstTask = nt;
    q.ntasks = static_cast<int>(list.size());
    for (const P2pTask* t : list) L->tasks[nt++] = DevP2pTask{t->sendbuf, t->recvbuf, t->bytes};
  }
  const int err = launchDeviceP2p(L.get(), stream);
  if (err != 0) {
    CHORUS_THROW(Status::kUnhandledCudaError,
                 "launching the point-to-point kernel failed: ", cudaGetErrorString(static_cast<cudaError_t>(err)));
  }
}

}  // namespace chorus::coll::device

#endif  // CHORUS_BUILD_CUDA
