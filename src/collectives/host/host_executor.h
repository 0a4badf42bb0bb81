// The host executor: runs one communicator's share of a launched group (collectives in issue order, then
// its send/recv operations progressed together) on the calling thread, over HostPrims.
#pragma once

#include <vector>

#include "base/wait.h"
#include "collectives/coll_op.h"
#include "collectives/conn_key.h"
#include "collectives/topo_view.h"

namespace chorus::coll {

struct ExecEnv {
  int rank = 0;
  int nranks = 1;
  const TopoView* topo = nullptr;
  ConnectionProvider* conns = nullptr;
  const WaitContext* ctx = nullptr;
};

// One point-to-point transfer (collectives such as all-to-all become lists of them).
struct P2pTask {
  bool send = true;
  int peer = -1;
  const void* sendbuf = nullptr;  // send
  void* recvbuf = nullptr;        // recv
  size_t bytes = 0;
};

// Appends the connections `op` needs at `rank` (sends and receives, both directions as keys of this side).
void addNeededConnections(const CollOp& op, const TopoView& topo, int rank, int nranks, std::vector<ConnKey>* keys);
// Appends the transfers of a collective that is implemented with point-to-point messages (all-to-all,
// gather, scatter, send, recv).
void addP2pTasks(const CollOp& op, int rank, int nranks, std::vector<P2pTask>* tasks);
// True for operations run as point-to-point tasks.
bool isP2pOp(const CollOp& op);

// Runs a ring or tree collective. Throws chorus::Error on failure.
void runCollective(const CollOp& op, const ExecEnv& env);
// Progresses every task until all are done: sends and receives never wait on each other, whatever their
// order, so the matching groups of two ranks cannot deadlock.
void runP2p(const std::vector<P2pTask>& tasks, const ExecEnv& env);

}  // namespace chorus::coll
