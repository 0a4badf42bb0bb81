// Names of the connections an executor needs. A connection is a one-way FIFO between this rank and a peer
// on a lane, the index of a set of FIFOs between two ranks: lane c < kMaxChannels carries the collectives of
// channel c (ring and tree traffic share it, and the direct algorithms use lane 0: every rank runs its
// operations in the same order, so messages on one FIFO never interleave between operations), and kP2pLane
// carries the point-to-point transfers, whose progress is interleaved and so needs FIFOs of its own. A channel
// is the unit of parallelism of a collective (one ring or tree, one CUDA block); a lane is where its bytes go.
// The device executor splits large point-to-point transfers over the kP2pLanes lanes from kP2pLane (one CUDA
// block each, as a collective over its channels); the host executor uses kP2pLane alone.
#pragma once

#include <cstdint>

#include "transport/fifo.h"

namespace chorus::coll {

constexpr int kMaxChannels = 16;
constexpr int kP2pLane = kMaxChannels;
constexpr int kP2pLanes = 8;
constexpr int kLanes = kP2pLane + kP2pLanes;  // lanes of a pair of ranks, collective and point-to-point

struct ConnKey {
  int peer = -1;
  int lane = 0;
  bool send = true;  // true: this rank sends to peer; false: receives from peer
  bool operator==(const ConnKey& o) const { return peer == o.peer && lane == o.lane && send == o.send; }
  bool operator<(const ConnKey& o) const {
    if (peer != o.peer) return peer < o.peer;
    if (lane != o.lane) return lane < o.lane;
    return send < o.send;
  }
};

// Where the host executor finds built connections. The communicator builds them (core/connections.h, through
// the bootstrap and the transports) before execution, from the keys its plan lists (plan/plan.h).
class ConnectionProvider {
 public:
  virtual ~ConnectionProvider() = default;
  virtual transport::SendConnection* sendConn(int peer, int lane) = 0;
  virtual transport::RecvConnection* recvConn(int peer, int lane) = 0;
};

}  // namespace chorus::coll
