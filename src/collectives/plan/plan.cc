#include "collectives/plan/plan.h"

#include <algorithm>

#include "base/error.h"
#include "collectives/pattern/ring.h"

namespace chorus::coll {

namespace {

// A tree rooted where `op` needs it: the searched tree of channel `ch` with the labels of its root and the
// operation's root exchanged (all-reduce keeps the searched root), as seen by `rank`. Every rank applies the same
// exchange, so the rooted trees agree.
void rootedTree(const CollOp& op, const TopoView& topo, int rank, int ch, int* parent, PeerSet* children) {
  const TreeView& t = topo.trees[ch % 2];
  const int root = op.type == CollType::kAllReduce ? t.root : op.root;
  auto swap = [&](int x) { return x == t.root ? root : x == root ? t.root : x; };
  const int x = swap(rank);
  *parent = t.parent[x] < 0 ? -1 : swap(t.parent[x]);
  CHORUS_ENFORCE(t.children[x].size() <= static_cast<size_t>(kMaxRecvPeers), "tree node with too many children");
  children->nrecv = children->nsend = 0;
  for (int c : t.children[x]) {
    children->recv[children->nrecv++] = swap(c);
    children->send[children->nsend++] = swap(c);
  }
}

// A channel as a fresh ChannelPlan, without clearing the peer arrays (the counts say what is valid).
void resetChannel(ChannelPlan* w) {
  w->up.nrecv = w->up.nsend = w->down.nrecv = w->down.nsend = 0;
  w->ringIndex = 0;
  w->treeParent = -1;
  w->treeNChildren = 0;
}

// The connections a peer set's Primitives use on `lane`.
void addKeys(const PeerSet& s, int lane, std::vector<ConnKey>* keys) {
  for (int i = 0; i < s.nsend; ++i) keys->push_back(ConnKey{s.send[i], lane, true});
  for (int i = 0; i < s.nrecv; ++i) keys->push_back(ConnKey{s.recv[i], lane, false});
}

// Whether a ring collective moves data from rank `from` to its ring successor `to`: nothing enters a broadcast's
// root and nothing leaves a reduce's. Like directCarries (plan.h), this keeps pairs that carry nothing unconnected.
bool ringCarries(const CollOp& op, int from, int to) {
  switch (op.type) {
    case CollType::kBroadcast: return to != op.root;
    case CollType::kReduce: return from != op.root;
    default: return true;
  }
}

// Fills c (plan->colls[index], kept from an earlier plan: every field this reads is set here, and of the
// channels only the used ones).
void planCollective(const CollOp& op, const PlanContext& ctx, Plan* plan, size_t index) {
  const int rank = ctx.rank;
  const int nranks = ctx.nranks;
  CollPlan& c = plan->colls[index];
  c.op = op;
  c.premul = 1.0;
  c.postDiv = 1;
  c.ownInputCopy = -1;
  // One rank has nobody to build a tree with: its ring body copies input to output.
  if (nranks == 1 && op.algo == Algo::kTree) c.op.algo = Algo::kRing;
  const size_t elt = reduce::dtypeSize(op.dtype);
  const bool floating = reduce::isFloating(op.dtype);
  c.eltSize = elt;
  c.bytes = collBytes(op, nranks);
  if (op.op == reduce::Op::kAvg && floating) c.premul = 1.0 / nranks;
  if (op.op == reduce::Op::kAvg && !floating) c.postDiv = nranks;
  CollArgs& a = c.args;
  a = CollArgs{};
  a.count = op.count;
  a.nranks = nranks;
  a.rank = rank;
  a.root = op.root;
  a.nChannels = op.nChannels;
  // Slices start on cache-line boundaries where the count allows (the grain), and chunks are whole grains.
  a.grainElems = std::max<size_t>(64 / elt, 1);
  a.chunkElems = std::max<size_t>(op.chunkBytes / elt / a.grainElems, 1) * a.grainElems;
  std::vector<ConnKey>& keys = plan->connections;

  CHORUS_ENFORCE(hasAlgorithm(op.type, c.op.algo), "no ", algoName(c.op.algo), " algorithm for ", collName(op.type));
  switch (c.op.algo) {
    case Algo::kDirect: {
      CHORUS_ENFORCE(nranks <= kMaxDirectRanks, "no direct algorithm at ", nranks, " ranks");
      const size_t msg = op.count * elt;  // every message is one block (or the broadcast buffer)
      CHORUS_ENFORCE(msg <= ctx.slotBytes, "direct step of ", msg, " bytes exceeds a ", ctx.slotBytes, "-byte slot");
      for (int p = 0; p < nranks; ++p) {
        if (p == rank) continue;
        if (directCarries(op.type, op.root, rank, p)) keys.push_back(ConnKey{p, 0, true});
        if (directCarries(op.type, op.root, p, rank)) keys.push_back(ConnKey{p, 0, false});
      }
      // In place, a reduction writes its output before it folds in this rank's own contribution (unless the
      // rank is first): that contribution is read from a copy. A reduce writes an output on its root alone.
      const bool reduces = op.type == CollType::kAllReduce || op.type == CollType::kReduceScatter ||
                           (op.type == CollType::kReduce && rank == op.root);
      const size_t ownOff = op.type == CollType::kReduceScatter ? static_cast<size_t>(rank) * msg : 0;
      const char* own = static_cast<const char*>(op.sendbuff) + ownOff;
      if (reduces && rank > 0 && own == op.recvbuff) {
        const size_t inputBytes = op.type == CollType::kReduceScatter ? msg * static_cast<size_t>(nranks) : msg;
        c.ownInputCopy = static_cast<int>(plan->staging.size());
        plan->staging.push_back(Staging{op.sendbuff, ownOff, msg, inputBytes, index});
      }
      return;
    }
    case Algo::kTree:
      for (int ch = 0; ch < op.nChannels; ++ch) {
        ChannelPlan& w = c.channels[ch];
        resetChannel(&w);
        PeerSet children;
        rootedTree(c.op, *ctx.topo, rank, ch, &w.treeParent, &children);
        w.treeNChildren = children.nrecv;
        // A broadcast only moves data down the tree and a reduce only up: the other direction stays empty, and
        // unconnected (an all-reduce uses both).
        if (op.type != CollType::kBroadcast) {
          w.up.nrecv = children.nrecv;
          std::copy(children.recv, children.recv + children.nrecv, w.up.recv);
          if (w.treeParent >= 0) w.up.send[w.up.nsend++] = w.treeParent;
        }
        if (op.type != CollType::kReduce) {
          w.down.nsend = children.nsend;
          std::copy(children.send, children.send + children.nsend, w.down.send);
          if (w.treeParent >= 0) w.down.recv[w.down.nrecv++] = w.treeParent;
        }
        addKeys(w.up, ch, &keys);
        addKeys(w.down, ch, &keys);
      }
      return;
    case Algo::kRing:
      for (int ch = 0; ch < op.nChannels; ++ch) {
        ChannelPlan& w = c.channels[ch];
        resetChannel(&w);
        const std::vector<int>& ring = ctx.topo->rings[ch];
        w.ringIndex = ctx.topo->ringIndex[ch];
        if (nranks == 1) continue;
        const int prev = ringPrevRank(ring.data(), w.ringIndex, nranks);
        const int next = ringNextRank(ring.data(), w.ringIndex, nranks);
        if (ringCarries(c.op, prev, rank)) w.up.recv[w.up.nrecv++] = prev;
        if (ringCarries(c.op, rank, next)) w.up.send[w.up.nsend++] = next;
        addKeys(w.up, ch, &keys);
      }
      return;
  }
}

// Lowers a point-to-point operation into tasks (transfers to oneself included; matched later). alone: the operation
// is the only one of its work (an in-place all-to-all then needs no staging copy, see P2pTask::overlapsPeer).
void lowerP2p(const CollOp& op, const PlanContext& ctx, size_t collsBefore, bool alone, Plan* plan) {
  const int rank = ctx.rank;
  const int nranks = ctx.nranks;
  const size_t block = op.count * reduce::dtypeSize(op.dtype);
  const char* sbuf = static_cast<const char*>(op.sendbuff);
  char* rbuf = static_cast<char*>(op.recvbuff);
  int staged = -1;
  // In place, what this rank sends must be read before it is overwritten by what it receives. Alone in its work,
  // block j is sent to rank j and received from rank j only, so the executor orders the two per slot
  // (overlapsPeer) and the own block stays where it is; with other operations beside it (which may read or write
  // the buffer in between), the input is copied first.
  const bool inPlaceAllToAll = op.type == CollType::kAllToAll && op.sendbuff == op.recvbuff && op.count > 0;
  const bool overlaps = inPlaceAllToAll && alone;
  if (inPlaceAllToAll && !alone) {
    const size_t bytes = block * static_cast<size_t>(nranks);
    staged = static_cast<int>(plan->staging.size());
    plan->staging.push_back(Staging{op.sendbuff, 0, bytes, bytes, collsBefore});
  }
  auto send = [&](int to, const char* data) {
    P2pTask t;
    t.peer = to;
    t.src = data;
    if (staged >= 0) {
      t.staged = staged;
      t.stagedOffset = static_cast<size_t>(data - sbuf);
    }
    t.bytes = block;
    t.overlapsPeer = overlaps;
    plan->tasks.push_back(t);
  };
  auto recv = [&](int from, char* dst) {
    P2pTask t;
    t.send = false;
    t.peer = from;
    t.dst = dst;
    t.bytes = block;
    t.overlapsPeer = overlaps;
    plan->tasks.push_back(t);
  };
  switch (op.type) {
    case CollType::kSend: send(op.peer, sbuf); break;
    case CollType::kRecv: recv(op.peer, rbuf); break;
    case CollType::kAllToAll:
      // Start with the next rank so that not every rank sends to rank 0 first.
      for (int k = 0; k < nranks; ++k) {
        const int to = (rank + k) % nranks;
        const int from = (rank - k + nranks) % nranks;
        send(to, sbuf + to * block);
        recv(from, rbuf + from * block);
      }
      break;
    case CollType::kGather:
      send(op.root, sbuf);
      if (rank == op.root) {
        for (int r = 0; r < nranks; ++r) recv(r, rbuf + r * block);
      }
      break;
    case CollType::kScatter:
      if (rank == op.root) {
        for (int r = 0; r < nranks; ++r) send(r, sbuf + r * block);
      }
      recv(op.root, rbuf);
      break;
    default: CHORUS_THROW(Status::kInternalError, collName(op.type), " is not a point-to-point operation");
  }
}

// Bytes of a point-to-point queue per lane it is split over (as the collectives' channels on a GPU).
constexpr uint64_t kP2pBytesPerLane = uint64_t(512) << 10;

// The lanes a queue of `bytes` in all is split over: one per kP2pBytesPerLane, at most ctx.p2pLanes, and few
// enough that the 2 (nranks - 1) queues of every rank that shares a GPU in one process (one per peer and
// direction) stay within kDevBlockBudget blocks together (topo_view.h). Both ends of a queue compute it from the
// same values.
int p2pLanesFor(uint64_t bytes, const PlanContext& ctx) {
  if (ctx.p2pLanes <= 1) return 1;
  const uint64_t byBytes = std::max<uint64_t>((bytes + kP2pBytesPerLane - 1) / kP2pBytesPerLane, 1);
  const int sharing = ctx.topo != nullptr ? std::max(1, ctx.topo->ranksPerDevice) : 1;
  const int byPeers = std::max(1, kDevBlockBudget / (std::max(1, 2 * (ctx.nranks - 1)) * sharing));
  return static_cast<int>(std::min<uint64_t>(byBytes, static_cast<uint64_t>(std::min(ctx.p2pLanes, byPeers))));
}

// Splits the tasks into copies to oneself (the k-th send to oneself feeds the k-th receive from oneself) and
// queues per (peer, direction), each over the lanes p2pLanesFor gives it; transfers of no bytes to a peer are
// dropped. Allocates nothing once the plan's storage has grown to the work's size (a blocking send/recv of a few
// bytes is planned on every call).
void finishP2p(const PlanContext& ctx, Plan* plan) {
  std::vector<P2pTask>& tasks = plan->tasks;
  size_t selfSends = 0, selfRecvs = 0;
  for (const P2pTask& t : tasks) {
    if (t.peer == ctx.rank) ++(t.send ? selfSends : selfRecvs);
  }
  CHORUS_CHECK_USAGE(selfSends == selfRecvs, "rank ", ctx.rank, " posted ", selfSends, " sends to itself but ",
                     selfRecvs, " receives from itself");
  // Self copies: the k-th send to oneself with the k-th receive from oneself.
  size_t nextRecv = 0;
  for (size_t i = 0; selfSends > 0 && i < tasks.size(); ++i) {
    const P2pTask& s = tasks[i];
    if (s.peer != ctx.rank || !s.send) continue;
    while (tasks[nextRecv].peer != ctx.rank || tasks[nextRecv].send) ++nextRecv;
    const P2pTask& r = tasks[nextRecv++];
    CHORUS_CHECK_USAGE(s.bytes == r.bytes, "rank ", ctx.rank, ": a send to itself of ", s.bytes,
                       " bytes meets a receive of ", r.bytes, " bytes");
    if (s.bytes == 0 || (s.staged < 0 && s.src == r.dst)) continue;
    plan->selfCopies.push_back(SelfCopy{s.src, s.staged, s.stagedOffset, r.dst, s.bytes});
  }
  // What remains for peers, in place.
  size_t n = 0;
  for (const P2pTask& t : tasks) {
    if (t.peer != ctx.rank && t.bytes > 0) tasks[n++] = t;
  }
  tasks.resize(n);
  // Queues in (peer, receive before send) order; each keeps its tasks in issue order. An insertion sort is stable
  // and allocates nothing (std::stable_sort takes a buffer on every call); a large group is sorted by the library.
  auto before = [](const P2pTask& a, const P2pTask& b) { return a.peer != b.peer ? a.peer < b.peer : a.send < b.send; };
  if (n <= 64) {
    for (size_t i = 1; i < n; ++i) {
      P2pTask t = tasks[i];
      size_t j = i;
      for (; j > 0 && before(t, tasks[j - 1]); --j) tasks[j] = tasks[j - 1];
      tasks[j] = t;
    }
  } else {
    std::stable_sort(tasks.begin(), tasks.end(), before);
  }
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (plan->queues.empty() || plan->queues.back().peer != tasks[i].peer ||
        plan->queues.back().send != tasks[i].send) {
      plan->queues.push_back(P2pQueue{tasks[i].peer, tasks[i].send, i, 0});
    }
    ++plan->queues.back().count;
  }
  for (P2pQueue& q : plan->queues) {
    uint64_t bytes = 0;
    for (size_t i = q.first; i < q.first + q.count; ++i) bytes += tasks[i].bytes;
    q.lanes = p2pLanesFor(bytes, ctx);
    for (int l = 0; l < q.lanes; ++l) plan->connections.push_back(ConnKey{q.peer, kP2pLane + l, q.send});
  }
}

}  // namespace

void planWork(const std::vector<CollOp>& ops, const PlanContext& ctx, Plan* plan) {
  plan->staging.clear();
  plan->tasks.clear();
  plan->queues.clear();
  plan->selfCopies.clear();
  plan->connections.clear();
  // The collectives' storage is reused as it is (a CollPlan is large, and most launches plan the same few
  // operations again): planCollective sets what it uses.
  size_t ncolls = 0;
  bool p2p = false;
  for (const CollOp& op : ops) {
    if (isP2p(op.type)) {
      lowerP2p(op, ctx, ncolls, ops.size() == 1 && ctx.ordersOverlaps, plan);
      p2p = true;
    } else if (op.count > 0) {
      if (ncolls == plan->colls.size()) plan->colls.emplace_back();
      planCollective(op, ctx, plan, ncolls++);
    }
  }
  plan->colls.resize(ncolls);
  if (p2p) finishP2p(ctx, plan);
  // Operations of one group often need the same connections: each is listed once.
  std::vector<ConnKey>& keys = plan->connections;
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
}

}  // namespace chorus::coll
