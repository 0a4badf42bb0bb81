// The communicator: one rank's view of a group of ranks, with everything it owns (bootstrap, transports,
// connections, rings and trees, the tuning model, the error state). chorusComm_t points at one of these.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/wait.h"
#include "chorus_build_config.h"
#include "collectives/conn_key.h"
#include "collectives/topo_view.h"
#include "collectives/tuning.h"
#include "core/bootstrap/bootstrap.h"
#include "core/worker.h"
#include "transport/peer_info.h"
#include "transport/select.h"

namespace chorus::core {

#if CHORUS_BUILD_CUDA  // CUDA executor (issue 6)
class DeviceComm;
struct DeviceCommDeleter {
  void operator()(DeviceComm* d) const;
};
#endif

// Options resolved from chorusConfig_t, the environment and defaults.
struct CommOptions {
  bool blocking = true;
  int device = -1;
  int64_t timeoutMs = 600000;
  std::string netName;
  int minChannels = 1;
  int maxChannels = 0;  // 0: automatic
  std::string commName;
  bool checkMode = false;
};

class Comm : public coll::ConnectionProvider {
 public:
  Comm(int rank, int nranks, CommOptions options);
  ~Comm() override;

  // Completes creation: rendezvous (or the given bootstrap), peer exchange, transports, rings and trees.
  // Throws on failure.
  void setUp(std::unique_ptr<bootstrap::Bootstrap> bootstrap);

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  int device() const { return options_.device; }
  const CommOptions& options() const { return options_; }
  bootstrap::Bootstrap& bootstrap() { return *bootstrap_; }
  const std::vector<transport::PeerInfo>& peers() const { return peers_; }
  const coll::TopoView& topo() const { return topo_; }
  // What the tuning model knows of this communicator, fixed at creation.
  const coll::TuningContext& tuning() const { return tuning_; }
  // True when this host runs more ranks than this process may use cores: waits then yield at once.
  bool oversubscribed() const { return oversubscribed_; }

  // A WaitContext for one blocking step: deadline = now + timeout, this comm's abort flag, peer liveness.
  WaitContext waitContext(std::string what) const;
  // The same for the data path, refilling *ctx in place; `what` is only "rank R" (the operation is named
  // where an error is reported), so a warm call neither allocates nor formats.
  void fillWaitContext(WaitContext* ctx) const;

  // Builds, in two deadlock-free phases, every connection in `keys` that does not exist yet. Collective
  // between the peers named: every rank involved must call it with the mirror keys.
  void ensureConnected(const std::vector<coll::ConnKey>& keys);
  transport::SendConnection* sendConn(int peer, int lane) override;
  transport::RecvConnection* recvConn(int peer, int lane) override;
  // "shm", "socket", ... for the pair (this rank, peer).
  std::string transportName(int peer) const;
  // Bytes per FIFO slot of every connection (CHORUS_BUFFSIZE / 8 slots).
  size_t slotBytes() const;

  // Waits until every sent slot has left this rank (the socket proxy wrote it, or the peer consumed it), so
  // that destroying the connections loses nothing a peer still expects.
  void drainSends(const WaitContext& ctx);

  // After a failed operation: marks every connection closed, so peers waiting on this rank (through shared
  // memory or in-process FIFOs) fail at once instead of at their deadline.
  void poisonConnections();

  // Abort: every waiter on this comm gives up.
  void abort();
  bool aborted() const { return abort_.load() != 0; }
  // chorusCommRevoke: aborts as abort() does, and waits report "revoked" (kAbortRevoked) instead of "aborted".
  void revoke();
  bool revoked() const { return abort_.load() == kAbortRevoked; }
  const std::atomic<uint32_t>* abortFlag() const { return &abort_; }

  // Init state for non-blocking creation; asynchronous error of executed work.
  void setInitResult(Status s) { initState_.store(static_cast<int>(s)); }
  Status initResult() const { return static_cast<Status>(initState_.load()); }
  void recordAsyncError(Status s, const std::string& msg);
  Status asyncError() const { return static_cast<Status>(asyncError_.load()); }

  void setLastError(const std::string& msg);
  std::string lastError() const;

  // Pending operations (enqueued, not finished): Finalize and Destroy wait for zero.
  void opEnqueued() { pending_.fetch_add(1); }
  void opFinished() { pending_.fetch_sub(1); }
  int pendingOps() const { return pending_.load(); }
  // Waits until no operation is pending (or the deadline).
  void waitIdle(const WaitContext& ctx) const;

  // A fresh tag for a child of this communicator (split, shrink); the same sequence on every rank.
  uint64_t nextChildTag() { return ++childCount_; }

  // The thread that runs this communicator's share of a group that spans several communicators.
  Worker& worker();

  // Joins the thread doing a non-blocking init, if any.
  void joinInitThread();
  void setInitThread(std::thread t) { initThread_ = std::move(t); }

 private:
  int rank_;
  int nranks_;
  CommOptions options_;
  std::unique_ptr<bootstrap::Bootstrap> bootstrap_;
  std::vector<transport::PeerInfo> peers_;
  std::unique_ptr<transport::TransportSet> transports_;
  coll::TopoView topo_;
  coll::TuningContext tuning_;
  bool oversubscribed_ = false;
  std::string rankTag_;  // "rank R"

  // Lock-free lookup of built connections: [lane][peer]. Written under connMu_ once, never removed before
  // the communicator is destroyed.
  std::vector<std::unique_ptr<std::atomic<transport::SendConnection*>[]>> sendTable_;
  std::vector<std::unique_ptr<std::atomic<transport::RecvConnection*>[]>> recvTable_;
  bool haveAll(const std::vector<coll::ConnKey>& keys) const;

  mutable std::mutex connMu_;
  std::map<coll::ConnKey, std::unique_ptr<transport::SendConnection>> sends_;
  std::map<coll::ConnKey, std::unique_ptr<transport::RecvConnection>> recvs_;

  std::atomic<uint32_t> abort_{0};
  std::atomic<int> initState_{static_cast<int>(Status::kInProgress)};
  std::atomic<int> asyncError_{0};
  std::atomic<int> pending_{0};
  uint64_t childCount_ = 0;
  std::thread initThread_;
  std::mutex workerMu_;
  std::unique_ptr<Worker> worker_;

  mutable std::mutex errMu_;
  std::string lastError_;

#if CHORUS_BUILD_CUDA
 public:
  // CUDA executor (issue 6): this communicator's device state (core/device_comm.h), made by its first device
  // launch. Declared last so that it is destroyed first: its watchdog thread uses the members above.
  std::unique_ptr<DeviceComm, DeviceCommDeleter> deviceState;
#endif
};

// Validates a chorusComm_t handle and returns the communicator; throws chorusInvalidArgument naming `arg`.
Comm* checkComm(const void* handle, const char* arg = "comm");

// This process's identity for PeerInfo::processId: pid plus a random salt (pids repeat across hosts).
uint64_t processId();

}  // namespace chorus::core
