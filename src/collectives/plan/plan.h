// Planning: what one communicator's share of a launch needs, worked out once from the operations and the
// communicator's rings and trees, and read by both executors (host/host_executor.h, device/device_executor.h).
//
// A plan holds, for every ring, tree or direct collective, the peers each channel's Primitives talk to (ring
// neighbours, the tree rooted for the operation, or every rank), the algorithm's arguments (chunk geometry)
// and the avg epilogue; for the point-to-point operations (all-to-all, gather, scatter, send, recv) their
// transfers grouped per peer and direction, and the copies a rank makes to itself; the buffers that must be
// copied before they are overwritten (staging); and every connection the work uses. It decides, it does not
// act: it touches no buffer and no connection. The core plans once per launch, connects what the plan lists,
// then hands it to one executor (core/launch.cc, core/device_launch.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collectives/coll_op.h"
#include "collectives/conn_key.h"
#include "collectives/primitives.h"
#include "collectives/topo_view.h"

namespace chorus::coll {

// The direct algorithms post to every peer at once; beyond this many ranks the ring and tree win anyway.
constexpr int kMaxDirectRanks = 64;

// Whether a direct algorithm for `type` rooted at `root` carries data from rank `from` to rank `to` (from != to):
// a broadcast's data only leaves the root and a reduce's only reaches it; the other direct algorithms exchange
// between every pair. The plan connects only these pairs, and the executors look up only these connections:
// a pair that carries nothing must not be connected, or a rank still connecting it can be refused by a peer
// that has finished its part and exited.
inline bool directCarries(CollType type, int root, int from, int to) {
  switch (type) {
    case CollType::kBroadcast: return from == root;
    case CollType::kReduce: return to == root;
    default: return true;
  }
}

// The peers of one Primitives object, as ranks.
struct PeerSet {
  int recv[kMaxRecvPeers] = {};
  int nrecv = 0;
  int send[kMaxSendPeers] = {};
  int nsend = 0;
};

// One channel of a ring or tree collective, on lane `channel`.
struct ChannelPlan {
  PeerSet up;         // ring: prev -> next; tree: children -> parent
  PeerSet down;       // tree: parent -> children
  int ringIndex = 0;  // ring: this rank's position in the channel's ring
  int treeParent = -1;
  int treeNChildren = 0;
};

// A copy of part of a buffer, taken at a point in issue order because the work overwrites the original before
// it is done reading it: the input of an in-place all-to-all (received blocks land where blocks still to be
// sent are), and this rank's own contribution to an in-place direct reduction (folded in after the output was
// written). The copy is `size` bytes with bytes [offset, offset + bytes) of `base` at the same offset.
struct Staging {
  const void* base = nullptr;
  size_t offset = 0;
  size_t bytes = 0;
  size_t size = 0;
  size_t before = 0;  // taken just before colls[before] runs (colls.size(): after every collective)
};

// One ring, tree or direct collective.
struct CollPlan {
  CollOp op;
  size_t eltSize = 1;     // bytes per element
  size_t bytes = 0;       // collBytes(op): what crosses the busiest link per rank
  CollArgs args;          // channel, ring and tree fields are set per channel from channels[]
  double premul = 1.0;    // avg on floating types: each contribution is premultiplied (reduce::ReduceParams)
  int64_t postDiv = 1;    // avg on integer types: the result is divided
  int ownInputCopy = -1;  // direct: the staging that this rank's own Primitives reads as its input, or -1
  ChannelPlan channels[kMaxChannels];  // ring and tree: [0, op.nChannels); direct: unused (every rank, lane 0)
};

// One point-to-point transfer to or from a peer.
struct P2pTask {
  bool send = true;
  int peer = -1;
  const void* src = nullptr;  // send: the data, unless staged (then at stagedOffset in staging copy `staged`)
  int staged = -1;
  size_t stagedOffset = 0;
  void* dst = nullptr;  // recv: where it lands
  size_t bytes = 0;
  // An in-place all-to-all planned without a staging copy: the receive from a peer lands where the send to that peer
  // reads. The executor lets the receive's bytes land only where the send has already read (and the send never
  // publishes a remote reference, which the peer would read later). Set on both tasks; each queue then holds one.
  bool overlapsPeer = false;
};

// The tasks with one peer in one direction, in issue order: they share one FIFO, so they run one after another.
struct P2pQueue {
  int peer = -1;
  bool send = true;
  size_t first = 0;  // tasks [first, first + count) of Plan::tasks
  size_t count = 0;
  // Lanes kP2pLane .. kP2pLane + lanes - 1 each carry their part of every task (device/device_launch_args.h:
  // devP2pPart) when the executor splits transfers (PlanContext::p2pLanes); decided from what both ends know
  // alike (the queue's bytes, the rank count, the ranks per GPU), so a sender's queue and its receiver's split
  // the same way.
  int lanes = 1;
};

// A send to oneself matched with the receive from oneself in the same position.
struct SelfCopy {
  const void* src = nullptr;  // unless staged (as P2pTask)
  int staged = -1;
  size_t stagedOffset = 0;
  void* dst = nullptr;
  size_t bytes = 0;
};

struct Plan {
  std::vector<CollPlan> colls;       // in issue order; run before every point-to-point transfer
  std::vector<Staging> staging;      // in issue order
  std::vector<P2pTask> tasks;        // grouped by queue
  std::vector<P2pQueue> queues;      // ordered by (peer, direction), progressed together after the collectives
  std::vector<SelfCopy> selfCopies;  // made when the point-to-point phase starts
  std::vector<ConnKey> connections;  // sorted, no duplicates
  bool hasP2p() const { return !queues.empty() || !selfCopies.empty(); }
};

// What planning needs to know about the communicator.
struct PlanContext {
  int rank = 0;
  int nranks = 1;
  const TopoView* topo = nullptr;
  size_t slotBytes = 0;  // FIFO slot size (transport/fifo_geometry.h): a direct step's message must fit one
  // Whether the executor orders a receive after the send of the same bytes (P2pTask::overlapsPeer: the host's
  // point-to-point engine does; the device executor's blocks do not, so its in-place all-to-all is staged).
  bool ordersOverlaps = true;
  // Lanes a point-to-point queue may be split over (at most kP2pLanes): 1 for the host executor (one thread moves
  // a queue), more for the device executor (one CUDA block per lane).
  int p2pLanes = 1;
};

// Plans `ops` (validated and tuned, in issue order) into *plan, reusing its storage. Throws chorusInvalidUsage
// for sends to oneself that do not match the receives from oneself, chorusInternalError for a collective with no
// algorithm of its tuned kind.
void planWork(const std::vector<CollOp>& ops, const PlanContext& ctx, Plan* plan);

// Where a task's (or self copy's) data is, given the executor's staging copies (copies[i] for staging[i]).
template <typename T, typename Copies>
const void* source(const T& t, const Copies& copies) {
  if (t.staged < 0) return t.src;
  return static_cast<const char*>(copies[static_cast<size_t>(t.staged)]) + t.stagedOffset;
}

}  // namespace chorus::coll
