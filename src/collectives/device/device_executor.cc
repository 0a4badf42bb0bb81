#include "collectives/device/device_executor.h"

#include "chorus_build_config.h"

#if CHORUS_BUILD_CUDA

#include <cuda_runtime.h>

#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "base/error.h"
#include "base/logging.h"
#include "collectives/device/device_kernel_table.h"
#include "collectives/device/device_launch_args.h"
#include "collectives/reduce/reduce.h"
#include "transport/cuda/cuda_util.h"

namespace chorus::coll::device {

namespace {

void fillPeers(const PeerSet& s, int lane, DevConnProvider* conns, DevPeers* out) {
  for (int i = 0; i < s.nrecv; ++i) out->recv[i] = conns->devRecvConn(s.recv[i], lane);
  for (int i = 0; i < s.nsend; ++i) out->send[i] = conns->devSendConn(s.send[i], lane);
  out->nrecv = s.nrecv;
  out->nsend = s.nsend;
}

void launchCollective(const CollPlan& c, const std::vector<void*>& copies, const DevExecEnv& env, void* stream) {
  const CollOp& op = c.op;
  if (env.nranks == 1) {
    // One rank: the result is its own input (every reduction of one value is that value, avg's factors are 1), a
    // copy the copy engine makes at the memory's speed, where one block per channel would not.
    if (op.sendbuff != op.recvbuff && op.count > 0) {
      CHORUS_CHECK_CUDA(cudaMemcpyAsync(op.recvbuff, op.sendbuff, op.count * reduce::dtypeSize(op.dtype),
                                        cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream)));
    }
    return;
  }
  const int kind = algoKind(op);
  CHORUS_ENFORCE(kind >= 0, "no device algorithm for ", collName(op.type), " with ", algoName(op.algo));
  auto L = std::make_unique<DevCollLaunch>();  // ~10 KiB: not on the caller's stack
  L->nChannels = op.algo == Algo::kDirect ? 1 : op.nChannels;
  CHORUS_ENFORCE(L->nChannels >= 1 && L->nChannels <= kMaxChannels, "channel count ", L->nChannels);
  L->kind = kind;
  L->input = op.sendbuff;
  L->output = op.recvbuff;
  L->ownInput = c.ownInputCopy >= 0 ? copies[static_cast<size_t>(c.ownInputCopy)] : op.sendbuff;
  L->red.op = static_cast<int>(op.op);
  L->red.premul = c.premul;
  L->red.postDiv = c.postDiv;
  L->abortFlag = env.abortFlag;
  L->reports = env.reports;
  L->args = c.args;
  if (op.algo == Algo::kDirect) {
    for (int r = 0; r < env.nranks; ++r) {
      if (r == env.rank) continue;
      // A direction that carries nothing is not connected (directCarries, plan.h): its entry stays empty.
      if (directCarries(op.type, op.root, env.rank, r)) L->direct.send[r] = env.conns->devSendConn(r, 0);
      if (directCarries(op.type, op.root, r, env.rank)) L->direct.recv[r] = env.conns->devRecvConn(r, 0);
    }
  }
  for (int ch = 0; op.algo != Algo::kDirect && ch < op.nChannels; ++ch) {
    const ChannelPlan& w = c.channels[ch];
    DevChannelWork& d = L->channels[ch];
    fillPeers(w.up, ch, env.conns, &d.up);
    fillPeers(w.down, ch, env.conns, &d.down);
    d.treeParent = w.treeParent;
    d.treeNChildren = w.treeNChildren;
    d.ring = env.deviceRings[ch];
    d.ringIndex = w.ringIndex;
  }
  int n = 0;
  const DevKernelEntry* table = deviceKernelTable(&n);
  const DevKernelEntry* e = nullptr;
  for (int i = 0; i < n; ++i) {
    if (table[i].dtype == op.dtype) e = &table[i];
  }
  CHORUS_ENFORCE(e != nullptr, "no device kernel for ", reduce::dtypeName(op.dtype));
  CHORUS_CHECK_CUDA(static_cast<cudaError_t>(e->launch(L.get(), stream)), "launching the ", collName(op.type),
                    " kernel");
}

void launchP2p(const Plan& plan, const std::vector<void*>& copies, const DevExecEnv& env, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  for (const SelfCopy& c : plan.selfCopies) {
    CHORUS_CHECK_CUDA(cudaMemcpyAsync(c.dst, source(c, copies), c.bytes, cudaMemcpyDeviceToDevice, s));
  }
  if (plan.queues.empty()) return;
  size_t blocks = 0;
  for (const P2pQueue& q : plan.queues) blocks += static_cast<size_t>(q.lanes);
  CHORUS_CHECK_ARG(blocks <= static_cast<size_t>(kDevMaxP2pQueues), "a group with ", plan.queues.size(),
                   " point-to-point peers and directions (", blocks, " lanes): the device executor takes at most ",
                   kDevMaxP2pQueues);
  CHORUS_CHECK_ARG(plan.tasks.size() <= static_cast<size_t>(kDevMaxP2pTasks), "a group with more than ",
                   kDevMaxP2pTasks, " point-to-point transfers: the device executor takes at most that many");
  auto L = std::make_unique<DevP2pLaunch>();
  L->abortFlag = env.abortFlag;
  L->reports = env.reports;
  for (const P2pQueue& q : plan.queues) {
    for (int lane = 0; lane < q.lanes; ++lane) {
      DevP2pQueue& d = L->queues[L->nqueues++];
      d.send = q.send ? 1 : 0;
      d.conn =
          q.send ? env.conns->devSendConn(q.peer, kP2pLane + lane) : env.conns->devRecvConn(q.peer, kP2pLane + lane);
      d.firstTask = static_cast<int>(q.first);
      d.ntasks = static_cast<int>(q.count);
      d.part = lane;
      d.parts = q.lanes;
    }
  }
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const P2pTask& t = plan.tasks[i];
    L->tasks[i] = DevP2pTask{t.send ? source(t, copies) : nullptr, t.dst, t.bytes};
  }
  CHORUS_CHECK_CUDA(static_cast<cudaError_t>(launchDeviceP2p(L.get(), stream)), "launching the point-to-point kernel");
}

// Frees the staging copies after everything enqueued before (stream order), however the launch ends.
struct StagingCopies {
  std::vector<void*> ptrs;
  cudaStream_t stream;
  ~StagingCopies() {
    for (void* p : ptrs) {
      if (p != nullptr) cudaFreeAsync(p, stream);
    }
  }
};

}  // namespace

void loadKernels(int device) {
  static std::mutex mu;
  static std::set<int> loaded;
  std::lock_guard<std::mutex> lock(mu);
  if (!loaded.insert(device).second) return;
  int n = 0;
  const DevKernelEntry* table = deviceKernelTable(&n);
  std::vector<std::pair<const char*, const void*>> kernels;
  for (int i = 0; i < n; ++i) kernels.emplace_back(table[i].name, table[i].symbol());
  kernels.emplace_back("point-to-point", deviceP2pSymbol());
  transport::cuda::DeviceScope scope(device);
  for (const auto& [name, symbol] : kernels) {
    cudaFuncAttributes attr;
    const cudaError_t e = cudaFuncGetAttributes(&attr, symbol);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();  // not sticky: the kernel's launch reports it again
      CHORUS_LOG_INFO(kInit, "CUDA device ", device, ": the ", name, " kernel did not load: ", cudaGetErrorString(e));
    }
  }
}

int algoKind(const CollOp& op) {
  switch (op.algo) {
    case Algo::kRing:
      switch (op.type) {
        case CollType::kAllReduce: return kDevRingAllReduce;
        case CollType::kBroadcast: return kDevRingBroadcast;
        case CollType::kReduce: return kDevRingReduce;
        case CollType::kAllGather: return kDevRingAllGather;
        case CollType::kReduceScatter: return kDevRingReduceScatter;
        default: return -1;
      }
    case Algo::kTree:
      switch (op.type) {
        case CollType::kAllReduce: return kDevTreeAllReduce;
        case CollType::kBroadcast: return kDevTreeBroadcast;
        case CollType::kReduce: return kDevTreeReduce;
        default: return -1;
      }
    case Algo::kDirect:
      switch (op.type) {
        case CollType::kAllReduce: return kDevDirectAllReduce;
        case CollType::kAllGather: return kDevDirectAllGather;
        case CollType::kReduceScatter: return kDevDirectReduceScatter;
        case CollType::kBroadcast: return kDevDirectBroadcast;
        case CollType::kReduce: return kDevDirectReduce;
        default: return -1;
      }
  }
  return -1;
}

void launchPlan(const Plan& plan, const DevExecEnv& env, void* stream,
                const std::function<void(const char*)>& launched) {
  const auto s = static_cast<cudaStream_t>(stream);
  StagingCopies copies{std::vector<void*>(plan.staging.size(), nullptr), s};
  size_t staged = 0;
  auto stageUpTo = [&](size_t before) {
    for (; staged < plan.staging.size() && plan.staging[staged].before <= before; ++staged) {
      const Staging& st = plan.staging[staged];
      CHORUS_CHECK_CUDA(cudaMallocAsync(&copies.ptrs[staged], st.size, s));
      CHORUS_CHECK_CUDA(cudaMemcpyAsync(static_cast<char*>(copies.ptrs[staged]) + st.offset,
                                        static_cast<const char*>(st.base) + st.offset, st.bytes,
                                        cudaMemcpyDeviceToDevice, s));
    }
  };
  for (size_t i = 0; i < plan.colls.size(); ++i) {
    stageUpTo(i);
    launchCollective(plan.colls[i], copies.ptrs, env, stream);
    launched(collName(plan.colls[i].op.type));
  }
  stageUpTo(plan.colls.size());
  if (plan.hasP2p()) {
    launchP2p(plan, copies.ptrs, env, stream);
    launched("point-to-point group");
  }
}

}  // namespace chorus::coll::device

#endif  // CHORUS_BUILD_CUDA
