// A communicator's connections: built on demand from the keys a plan lists (collectives/plan/plan.h), through the
// transport the table chooses for each pair (transport/table.h) and descriptors exchanged over the bootstrap,
// and handed to the executors by (peer, lane). Host FIFO ends serve the host executor, device FIFO ends the
// CUDA executor; the same keys, the same two phases, the same code for both.
//
// Building is collective between the peers named: every rank involved builds the mirror keys. It runs in two
// phases that cannot deadlock: first every missing receiving end is made and its descriptor posted to its
// sender (posting never waits for the peer), then every missing sending end is made from the receiver's
// descriptor. One thread that drives several communicators runs phase 1 for all of them before phase 2 for any.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/wait.h"
#include "bootstrap/bootstrap.h"
#include "collectives/conn_key.h"
#include "collectives/device/device_executor.h"
#include "transport/connection.h"
#include "transport/fifo.h"
#include "transport/peer_info.h"
#include "transport/table.h"

namespace chorus::core {

class ConnectionSet : public coll::ConnectionProvider, public coll::device::DevConnProvider {
 public:
  // What the set needs from its communicator; the references outlive the set.
  struct Context {
    int rank = 0;
    const std::vector<transport::PeerInfo>* peers = nullptr;
    bootstrap::Bootstrap* bootstrap = nullptr;
    const transport::TransportTable* transports = nullptr;
    std::function<WaitContext(std::string)> waitContext;  // a context for one blocking step, named
  };
  explicit ConnectionSet(Context ctx);
  ~ConnectionSet() override;

  // Both phases for `keys` (sorted, unique) in `memory`.
  void connect(const std::vector<coll::ConnKey>& keys, transport::FifoMemory memory);
  // Phase 1: builds the missing receiving ends and posts their descriptors. Phase 2: the missing sending ends.
  void postReceivers(const std::vector<coll::ConnKey>& keys, transport::FifoMemory memory);
  void connectSenders(const std::vector<coll::ConnKey>& keys, transport::FifoMemory memory);

  // Host FIFO ends, lock-free (the data path looks them up on every operation).
  transport::SendConnection* sendConn(int peer, int lane) override;
  transport::RecvConnection* recvConn(int peer, int lane) override;
  // Device FIFO ends.
  transport::cuda::DevConn devSendConn(int peer, int lane) override;
  transport::cuda::DevConn devRecvConn(int peer, int lane) override;

  // After a failed operation: closes every host FIFO, so that peers waiting on this rank (through shared memory
  // or in-process FIFOs) fail at once instead of at their deadline. Device FIFOs are closed when freed; kernels
  // are stopped by the abort word (core/device_comm.h).
  void closeHost();
  // Waits until every host send end has delivered what it posted.
  void drainSends(const WaitContext& ctx);

 private:
  struct Key {
    transport::FifoMemory memory;
    coll::ConnKey conn;
    bool operator<(const Key& o) const {
      if (memory != o.memory) return memory < o.memory;
      return conn < o.conn;
    }
  };
  bool haveAllHost(const std::vector<coll::ConnKey>& keys) const;
  transport::ConnectSpec spec(const coll::ConnKey& k, const char* step) const;
  transport::Connection& find(transport::FifoMemory memory, int peer, int lane, bool send);

  Context ctx_;
  // Host ends by [lane][peer]: written under mu_ once, never removed before the set is destroyed.
  std::vector<std::unique_ptr<std::atomic<transport::SendConnection*>[]>> sendTable_;
  std::vector<std::unique_ptr<std::atomic<transport::RecvConnection*>[]>> recvTable_;

  mutable std::mutex mu_;
  std::map<Key, std::unique_ptr<transport::Connection>> conns_;
};

}  // namespace chorus::core
