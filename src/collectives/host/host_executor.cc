#include "collectives/host/host_executor.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "base/error.h"
#include "collectives/algo/ring_allgather.h"
#include "collectives/algo/ring_allreduce.h"
#include "collectives/algo/ring_broadcast.h"
#include "collectives/algo/ring_reduce.h"
#include "collectives/algo/ring_reducescatter.h"
#include "collectives/algo/tree_allreduce.h"
#include "collectives/algo/tree_broadcast.h"
#include "collectives/algo/tree_reduce.h"
#include "collectives/host/host_prims.h"

namespace chorus::coll {

namespace {

// Outputs larger than this are written with streaming stores: they would only evict the FIFO slots.
constexpr size_t kNonTemporalBytes = 16u << 20;
// The direct algorithms post to every peer at once; beyond this many ranks the ring and tree win anyway.
constexpr int kMaxDirectRanks = 64;

// A tree whose root is `root`: the searched tree with the labels of its root and `root` exchanged.
struct RootedTree {
  int parent = -1;
  std::vector<int> children;
};

RootedTree treeAt(const TreeView& t, int rank, int root) {
  auto swap = [&](int x) { return x == t.root ? root : x == root ? t.root : x; };
  RootedTree out;
  const int x = swap(rank);
  out.parent = t.parent[x] < 0 ? -1 : swap(t.parent[x]);
  for (int c : t.children[x]) out.children.push_back(swap(c));
  return out;
}

// The tree that channel `ch` of `op` runs on, as seen by `rank`.
RootedTree opTree(const CollOp& op, const TopoView& topo, int rank, int ch) {
  const TreeView& t = topo.trees[ch % 2];
  if (op.type == CollType::kAllReduce) return treeAt(t, rank, t.root);
  return treeAt(t, rank, op.root);
}

bool usesTree(const CollOp& op) {
  return op.algo == Algo::kTree;
}

}  // namespace

bool isP2pOp(const CollOp& op) {
  switch (op.type) {
    case CollType::kAllToAll:
    case CollType::kGather:
    case CollType::kScatter:
    case CollType::kSend:
    case CollType::kRecv: return true;
    default: return false;
  }
}

void addNeededConnections(const CollOp& op, const TopoView& topo, int rank, int nranks, std::vector<ConnKey>* keys) {
  if (nranks == 1 || op.count == 0) return;
  if (isP2pOp(op)) {
    std::vector<P2pTask> tasks;
    addP2pTasks(op, rank, nranks, &tasks);
    for (const P2pTask& t : tasks) {
      if (t.peer != rank) keys->push_back(ConnKey{t.peer, kP2pLane, t.send});
    }
    return;
  }
  if (op.algo == Algo::kDirect) {
    // Direct algorithms: everyone to everyone on lane 0.
    for (int p = 0; p < nranks; ++p) {
      if (p == rank) continue;
      keys->push_back(ConnKey{p, 0, true});
      keys->push_back(ConnKey{p, 0, false});
    }
    return;
  }
  for (int ch = 0; ch < op.nChannels; ++ch) {
    if (usesTree(op)) {
      RootedTree t = opTree(op, topo, rank, ch);
      if (t.parent >= 0) {
        keys->push_back(ConnKey{t.parent, ch, true});
        keys->push_back(ConnKey{t.parent, ch, false});
      }
      for (int c : t.children) {
        keys->push_back(ConnKey{c, ch, true});
        keys->push_back(ConnKey{c, ch, false});
      }
    } else {
      const auto& ring = topo.rings[ch];
      const int pos = topo.ringIndex[ch];
      keys->push_back(ConnKey{ring[(pos + 1) % nranks], ch, true});
      keys->push_back(ConnKey{ring[(pos + nranks - 1) % nranks], ch, false});
    }
  }
}

void addP2pTasks(const CollOp& op, int rank, int nranks, std::vector<P2pTask>* tasks) {
  const size_t block = op.count * reduce::dtypeSize(op.dtype);
  const char* sbuf = static_cast<const char*>(op.sendbuff);
  char* rbuf = static_cast<char*>(op.recvbuff);
  switch (op.type) {
    case CollType::kSend: tasks->push_back({true, op.peer, op.sendbuff, nullptr, block}); break;
    case CollType::kRecv: tasks->push_back({false, op.peer, nullptr, op.recvbuff, block}); break;
    case CollType::kAllToAll:
      // Start with the next rank so that not every rank sends to rank 0 first.
      for (int k = 0; k < nranks; ++k) {
        int to = (rank + k) % nranks;
        int from = (rank - k + nranks) % nranks;
        tasks->push_back({true, to, sbuf + to * block, nullptr, block});
        tasks->push_back({false, from, nullptr, rbuf + from * block, block});
      }
      break;
    case CollType::kGather:
      tasks->push_back({true, op.root, op.sendbuff, nullptr, block});
      if (rank == op.root) {
        for (int r = 0; r < nranks; ++r) tasks->push_back({false, r, nullptr, rbuf + r * block, block});
      }
      break;
    case CollType::kScatter:
      if (rank == op.root) {
        for (int r = 0; r < nranks; ++r) tasks->push_back({true, r, sbuf + r * block, nullptr, block});
      }
      tasks->push_back({false, op.root, nullptr, op.recvbuff, block});
      break;
    default: CHORUS_THROW(Status::kInternalError, collName(op.type), " is not a point-to-point operation");
  }
}

namespace {

// Direct algorithms for small buffers: one step, every message one FIFO slot on lane 0, which connects
// every pair of ranks. With ranks that outnumber cores a ring's n-1 dependent steps each cost a scheduling
// round; here every rank runs once.

// Copies `bytes` from `data` into a slot to peer p and publishes it.
void postTo(const ExecEnv& env, int p, const void* data, size_t bytes) {
  transport::SendConnection* c = env.conns->sendConn(p, 0);
  CHORUS_ENFORCE(bytes <= c->slotBytes(), "direct step of ", bytes, " bytes exceeds a ", c->slotBytes(), "-byte slot");
  memcpy(c->acquire(*env.ctx), data, bytes);
  c->post(bytes);
}

// Posts the same `bytes` from `data` to every peer.
void postToEveryPeer(const ExecEnv& env, const void* data, size_t bytes) {
  for (int p = 0; p < env.nranks; ++p) {
    if (p != env.rank) postTo(env, p, data, bytes);
  }
}

// Waits for the slot from peer r, which must hold exactly `bytes`; release it through *from when done.
const void* peekFrom(const ExecEnv& env, int r, size_t bytes, transport::RecvConnection** from) {
  *from = env.conns->recvConn(r, 0);
  size_t got = 0;
  const void* x = (*from)->peek(&got, *env.ctx);
  if (got != bytes) {
    CHORUS_THROW(Status::kInvalidUsage, (*from)->what(), ": received ", got, " bytes where ", bytes,
                 " were expected: ranks called different collectives or counts (CHORUS_CHECK=1 verifies)");
  }
  return x;
}

// Reduces every rank's contribution of `count` elements into `out` in rank order (x0, then x1, ...): this
// rank's own is `mine`, the others' wait in lane-0 slots. The same order on every rank makes all-reduce
// results bit-identical across ranks, as the ring's single final reduction does.
void reduceInRankOrder(const ExecEnv& env, const HostPrimsConfig& cfg, const void* mine, void* out, size_t count) {
  const int n = env.nranks;
  const size_t bytes = count * cfg.eltSize;
  // In place, the output overwrites this rank's contribution before its turn: keep a copy.
  thread_local std::vector<char> own;
  if (mine == out && env.rank > 0) {
    own.assign(static_cast<const char*>(mine), static_cast<const char*>(mine) + bytes);
    mine = own.data();
  }
  for (int r = 0; r < n; ++r) {
    transport::RecvConnection* from = nullptr;
    const void* x = r == env.rank ? mine : peekFrom(env, r, bytes, &from);
    reduce::ReduceParams p = cfg.premul;
    if (r == n - 1) p.postDiv = cfg.postDiv;
    if (r == 0) {
      cfg.kernels->scale(out, x, count, p);
    } else {
      cfg.kernels->reduce(out, x, out, count, p);
    }
    if (from != nullptr) from->release();
  }
}

// All-reduce: every rank posts its whole input to every peer and reduces all contributions itself.
void runDirectAllReduce(const CollOp& op, const ExecEnv& env, const HostPrimsConfig& cfg) {
  const size_t bytes = op.count * cfg.eltSize;
  postToEveryPeer(env, cfg.input, bytes);
  reduceInRankOrder(env, cfg, cfg.input, cfg.output, op.count);
}

// Reduce-scatter: block p of every input goes to rank p, which reduces the n blocks in rank order.
void runDirectReduceScatter(const CollOp& op, const ExecEnv& env, const HostPrimsConfig& cfg) {
  const size_t bytes = op.count * cfg.eltSize;
  const char* in = static_cast<const char*>(cfg.input);
  for (int p = 0; p < env.nranks; ++p) {
    if (p != env.rank) postTo(env, p, in + p * bytes, bytes);
  }
  reduceInRankOrder(env, cfg, in + env.rank * bytes, cfg.output, op.count);
}

// All-gather: every rank posts its block to every peer and copies each peer's block into place.
void runDirectAllGather(const CollOp& op, const ExecEnv& env, const HostPrimsConfig& cfg) {
  const size_t bytes = op.count * cfg.eltSize;
  char* out = static_cast<char*>(cfg.output);
  postToEveryPeer(env, cfg.input, bytes);
  if (out + env.rank * bytes != cfg.input) memmove(out + env.rank * bytes, cfg.input, bytes);
  for (int r = 0; r < env.nranks; ++r) {
    if (r == env.rank) continue;
    transport::RecvConnection* from = nullptr;
    memcpy(out + r * bytes, peekFrom(env, r, bytes, &from), bytes);
    from->release();
  }
}

// Broadcast: the root posts to every peer; the others copy what the root posted.
void runDirectBroadcast(const CollOp& op, const ExecEnv& env, const HostPrimsConfig& cfg) {
  const size_t bytes = op.count * cfg.eltSize;
  if (env.rank == op.root) {
    postToEveryPeer(env, cfg.input, bytes);
    if (cfg.output != cfg.input) memmove(cfg.output, cfg.input, bytes);
    return;
  }
  transport::RecvConnection* from = nullptr;
  memcpy(cfg.output, peekFrom(env, op.root, bytes, &from), bytes);
  from->release();
}

}  // namespace

void runCollective(const CollOp& op, const ExecEnv& env) {
  if (op.count == 0) return;
  const bool floating = reduce::isFloating(op.dtype);
  HostPrimsConfig cfg;
  cfg.input = op.sendbuff;
  cfg.output = op.recvbuff;
  cfg.eltSize = reduce::dtypeSize(op.dtype);
  cfg.kernels = &reduce::kernels(op.dtype, op.op);
  if (op.op == reduce::Op::kAvg && floating) cfg.premul.premul = 1.0 / env.nranks;
  if (op.op == reduce::Op::kAvg && !floating) cfg.postDiv = env.nranks;
  cfg.nonTemporalOutput = collBytes(op, env.nranks) >= kNonTemporalBytes;
  cfg.ctx = env.ctx;
  if (op.algo == Algo::kDirect) {
    CHORUS_ENFORCE(env.nranks <= kMaxDirectRanks, "no direct algorithm at ", env.nranks, " ranks");
    switch (op.type) {
      case CollType::kAllReduce: runDirectAllReduce(op, env, cfg); return;
      case CollType::kReduceScatter: runDirectReduceScatter(op, env, cfg); return;
      case CollType::kAllGather: runDirectAllGather(op, env, cfg); return;
      case CollType::kBroadcast: runDirectBroadcast(op, env, cfg); return;
      default: CHORUS_THROW(Status::kInternalError, "no direct algorithm for ", collName(op.type));
    }
  }

  CollArgs a;
  a.count = op.count;
  a.nranks = env.nranks;
  a.rank = env.rank;
  a.root = op.root;
  a.nChannels = op.nChannels;
  // Slices start on cache-line boundaries where the count allows (the grain), and chunks are whole grains.
  a.grainElems = std::max<size_t>(64 / cfg.eltSize, 1);
  a.chunkElems = std::max<size_t>(op.chunkBytes / cfg.eltSize / a.grainElems, 1) * a.grainElems;
  for (int ch = 0; ch < op.nChannels; ++ch) {
    a.channel = ch;
    if (usesTree(op) && env.nranks > 1) {
      RootedTree t = opTree(op, *env.topo, env.rank, ch);
      a.treeParent = t.parent;
      a.treeNChildren = static_cast<int>(t.children.size());
      transport::RecvConnection* fromChildren[kMaxRecvPeers];
      transport::SendConnection* toChildren[kMaxSendPeers];
      CHORUS_ENFORCE(t.children.size() <= static_cast<size_t>(kMaxRecvPeers), "tree node with too many children");
      for (size_t i = 0; i < t.children.size(); ++i) {
        fromChildren[i] = env.conns->recvConn(t.children[i], ch);
        toChildren[i] = env.conns->sendConn(t.children[i], ch);
      }
      transport::RecvConnection* fromParent = t.parent >= 0 ? env.conns->recvConn(t.parent, ch) : nullptr;
      transport::SendConnection* toParent = t.parent >= 0 ? env.conns->sendConn(t.parent, ch) : nullptr;
      const int nc = a.treeNChildren;
      const int np = t.parent >= 0 ? 1 : 0;
      HostPrims up(cfg, fromChildren, nc, &toParent, np);
      HostPrims down(cfg, &fromParent, np, toChildren, nc);
      switch (op.type) {
        case CollType::kAllReduce: runTreeAllReduce(up, down, a); break;
        case CollType::kBroadcast: runTreeBroadcast(down, a); break;
        case CollType::kReduce: runTreeReduce(up, a); break;
        default: CHORUS_THROW(Status::kInternalError, "no tree algorithm for ", collName(op.type));
      }
      continue;
    }
    const auto& ring = env.topo->rings[ch];
    a.ring = ring.data();
    a.ringIndex = env.topo->ringIndex[ch];
    transport::RecvConnection* prev = nullptr;
    transport::SendConnection* next = nullptr;
    int np = 0;
    if (env.nranks > 1) {
      prev = env.conns->recvConn(ring[(a.ringIndex + env.nranks - 1) % env.nranks], ch);
      next = env.conns->sendConn(ring[(a.ringIndex + 1) % env.nranks], ch);
      np = 1;
    }
    HostPrims p(cfg, &prev, np, &next, np);
    switch (op.type) {
      case CollType::kAllReduce: runRingAllReduce(p, a); break;
      case CollType::kBroadcast: runRingBroadcast(p, a); break;
      case CollType::kReduce: runRingReduce(p, a); break;
      case CollType::kAllGather: runRingAllGather(p, a); break;
      case CollType::kReduceScatter: runRingReduceScatter(p, a); break;
      default: CHORUS_THROW(Status::kInternalError, "no ring algorithm for ", collName(op.type));
    }
  }
}

void runP2p(const std::vector<P2pTask>& tasks, const ExecEnv& env) {
  // Transfers to oneself: the k-th send to self feeds the k-th receive from self.
  std::vector<const P2pTask*> selfSends, selfRecvs;
  // Per (peer, direction), the tasks in issue order: they share one FIFO, so they run one after another.
  struct Queue {
    std::vector<const P2pTask*> tasks;
    size_t cur = 0;
    size_t off = 0;
    transport::SendConnection* send = nullptr;
    transport::RecvConnection* recv = nullptr;
  };
  std::map<std::pair<int, bool>, Queue> queues;
  for (const P2pTask& t : tasks) {
    if (t.peer == env.rank) {
      (t.send ? selfSends : selfRecvs).push_back(&t);
      continue;
    }
    if (t.bytes == 0) continue;
    Queue& q = queues[{t.peer, t.send}];
    q.tasks.push_back(&t);
    if (t.send && q.send == nullptr) q.send = env.conns->sendConn(t.peer, kP2pLane);
    if (!t.send && q.recv == nullptr) q.recv = env.conns->recvConn(t.peer, kP2pLane);
  }
  CHORUS_CHECK_USAGE(selfSends.size() == selfRecvs.size(), "rank ", env.rank, " posted ", selfSends.size(),
                     " sends to itself but ", selfRecvs.size(), " receives from itself");
  for (size_t i = 0; i < selfSends.size(); ++i) {
    CHORUS_CHECK_USAGE(selfSends[i]->bytes == selfRecvs[i]->bytes, "rank ", env.rank, ": a send to itself of ",
                       selfSends[i]->bytes, " bytes meets a receive of ", selfRecvs[i]->bytes, " bytes");
    if (selfRecvs[i]->recvbuf != selfSends[i]->sendbuf) {
      memmove(selfRecvs[i]->recvbuf, selfSends[i]->sendbuf, selfSends[i]->bytes);
    }
  }

  // The operation's context, watching every peer still owed a transfer as well.
  WaitContext ctx = *env.ctx;
  ctx.liveness = [&] {
    if (env.ctx->liveness) env.ctx->liveness();
    for (auto& [key, q] : queues) {
      if (q.cur == q.tasks.size()) continue;
      if (q.send) q.send->checkPeer();
      if (q.recv) q.recv->checkPeer();
    }
  };
  Waiter waiter(ctx);
  for (;;) {
    bool pending = false;
    bool progress = false;
    for (auto& [key, q] : queues) {
      while (q.cur < q.tasks.size()) {
        const P2pTask& t = *q.tasks[q.cur];
        if (q.off == t.bytes) {
          ++q.cur;
          q.off = 0;
          continue;
        }
        if (t.send) {
          void* slot = q.send->tryAcquire();
          if (slot == nullptr) break;
          size_t m = std::min(q.send->slotBytes(), t.bytes - q.off);
          memcpy(slot, static_cast<const char*>(t.sendbuf) + q.off, m);
          q.send->post(m);
          q.off += m;
        } else {
          size_t got = 0;
          const void* slot = q.recv->tryPeek(&got);
          if (slot == nullptr) break;
          size_t m = std::min(q.recv->slotBytes(), t.bytes - q.off);
          if (got != m) {
            CHORUS_THROW(Status::kInvalidUsage, q.recv->what(), ": received a piece of ", got, " bytes where ", m,
                         " were expected: the send and the receive disagree on the size");
          }
          memcpy(static_cast<char*>(t.recvbuf) + q.off, slot, m);
          q.recv->release();
          q.off += m;
        }
        progress = true;
      }
      if (q.cur < q.tasks.size()) pending = true;
    }
    if (!pending) return;
    if (progress) {
      waiter.reset();
    } else {
      waiter.pause();
    }
  }
}

}  // namespace chorus::coll
