// The communicator: one rank's view of a group of ranks, with everything it owns (bootstrap, transports,
// connections, rings and trees, the tuning model, the error state). chorusComm_t points at one of these.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/wait.h"
#include "bootstrap/bootstrap.h"
#include "chorus_build_config.h"
#include "collectives/plan/plan.h"
#include "collectives/topo_view.h"
#include "collectives/tuning.h"
#include "core/connections.h"
#include "core/flight_recorder.h"
#include "core/worker.h"
#include "transport/peer_info.h"
#include "transport/table.h"

namespace chorus::core {

#if CHORUS_BUILD_CUDA
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

class Comm {
 public:
  Comm(int rank, int nranks, CommOptions options);
  ~Comm();

  // Completes creation: peer exchange over the given bootstrap, transports, rings and trees. Throws on failure.
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

  // A WaitContext for one blocking step: deadline = now + timeout, this comm's abort flag, and peer liveness
  // through failure notices only. Each wait watches the one peer it waits for itself (a bootstrap receive holds a
  // connection to its sender, a data-path wait its FIFO's far end, a connection being made its peer), and a rank
  // that fails tells the others (announceFailure), so a failure reaches every rank within milliseconds. Watching
  // every peer's bootstrap endpoint as well failed ranks that waited on a live peer while another, done with its
  // part, had exited cleanly: a connection being made (session 20) and the exchange of peer information at init,
  // a split or a window registration (EarlyExitProcs, session 21).
  WaitContext waitContext(std::string what) const;
  // The same for the data path, refilling *ctx in place; `what` is only "rank R" (the operation is named
  // where an error is reported), so a warm call neither allocates nor formats.
  void fillWaitContext(WaitContext* ctx) const;
  // Sets the operation's deadline in a context fillWaitContext filled for this communicator (its other fields are
  // the communicator's for its life).
  void renewDeadline(WaitContext* ctx) const { ctx->deadline = Deadline::afterMs(options_.timeoutMs); }

  // What planning needs to know about this communicator (collectives/plan/plan.h).
  coll::PlanContext planContext() const;
  // The connections of this communicator, built from the keys of plans (connections.h).
  ConnectionSet& connections() { return *connections_; }
  // "shm", "socket", ... for host connections between this rank and peer.
  std::string transportName(int peer) const;

  // Waits until every sent slot has left this rank (the socket proxy wrote it, or the peer consumed it), so
  // that destroying the connections loses nothing a peer still expects.
  void drainSends(const WaitContext& ctx);

  // After a failed operation: closes every host connection, so peers waiting on this rank (through shared
  // memory or in-process FIFOs) fail at once instead of at their deadline.
  void poisonConnections();

  // Tells every peer, once, that this rank's communicator failed: their pending and next operations on it fail
  // at once naming this rank and `why`, with chorusTimeout where `cause` (the status of the first error) is a
  // timeout and chorusRemoteError otherwise (Bootstrap::announceFailure, bootstrap/failure_notice.h).
  void announceFailure(Status cause, const std::string& why);

  // After a deadline passed: names the peers on this host that are stopped ("; rank 3 (pid 123) is stopped"), the
  // usual reason for no progress; "" when none is.
  std::string stalledPeers() const;

  // An error this rank met (status `s`, message `cause`), completed with what explains it: after a deadline, the
  // peers on this host that are stopped; after a remote error that does not come from a peer's notice already,
  // the first cause named by the notice of a peer that failed, whose status it then takes (a connection closed
  // by a peer that timed out is a timeout here too). A rank that fails sends its notice before it closes its
  // connections or exits, so the notice is looked for once the bootstrap has delivered everything that reached
  // this host (Bootstrap::awaitDelivered), not after a fixed pause a loaded machine may outlast.
  Failure withFirstCause(Status s, std::string cause) const;

  // Shared-memory segments that a peer process of this host created and nobody mapped outlive it unless a
  // survivor removes them: registers every such peer known so far (all of them once set-up exchanged the peer
  // information, the ones received so far when set-up failed half-way) for the sweep at this process's exit
  // (base/shm.h), and with `now` sweeps those that are gone already.
  void sweepDeadLocalPeers(bool now);

  // Numbers `n` collectives in the order every rank issues them; returns the first number (slot_tag.h).
  uint32_t takeCollectiveSeqs(uint32_t n) {
    const uint32_t first = collSeq_;
    collSeq_ += n;
    return first;
  }

  // A fresh tag base for one chorusCommGetFailedRanks call; the same sequence on every rank.
  uint64_t nextAgreementTag() { return ++agreementCount_; }

  // Abort: every waiter on this comm gives up.
  void abort();
  bool aborted() const { return abort_.load() != 0; }
  // chorusCommRevoke: aborts as abort() does, and waits report "revoked" (kAbortRevoked) instead of "aborted";
  // also closes the host connections and tells the peers (announceFailure), so theirs fail now. The bootstrap
  // stays usable (chorusCommGetFailedRanks, chorusCommShrink).
  void revoke();
  bool revoked() const { return abort_.load() == kAbortRevoked; }
  const std::atomic<uint32_t>* abortFlag() const { return &abort_; }

  // Init state for non-blocking creation; asynchronous error of executed work.
  void setInitResult(Status s) { initState_.store(static_cast<int>(s)); }
  Status initResult() const { return static_cast<Status>(initState_.load()); }
  void recordAsyncError(Status s, const std::string& msg);
  Status asyncError() const { return static_cast<Status>(asyncError_.load()); }
  // The message of the first asynchronous error ("" if none): what the notice of a later destroy names (the
  // last error may by then be a consequence, such as the abort of work still queued).
  std::string firstAsyncError() const;

  void setLastError(const std::string& msg);
  std::string lastError() const;

  // The flight recorder of this communicator's operations (made by setUp; records nothing at CHORUS_FR_SIZE=0).
  FlightRecorder* recorder() const { return recorder_.get(); }
  // True when CHORUS_TRACE_FILE asks for a trace (trace.h).
  bool tracing() const { return tracing_; }
  // The communicator's public name (the same on every rank), for dumps and traces.
  uint64_t commHash() const { return commHash_; }
  // A number no other communicator of this process has had, even one made at the same address after this one is
  // destroyed: what a per-thread memo of this communicator's plans is keyed on (launch.cc).
  uint64_t serial() const { return serial_; }

  // Pending operations (enqueued, not finished): Finalize and Destroy wait for zero.
  // Counts n operations queued, or finished (a launch counts its operations at once: each count is a locked
  // instruction, which waits for this core's stores to reach other cores' caches).
  void opsEnqueued(int n) { pending_.fetch_add(n); }
  void opsFinished(int n) { pending_.fetch_sub(n); }
  int pendingOps() const { return pending_.load(); }
  // Waits until no operation is pending (or the deadline).
  void waitIdle(const WaitContext& ctx) const;

  // Issue order across streams. Launches of this communicator run one after another in the order they were issued,
  // whichever streams carry them (as NCCL orders a communicator's kernels): two at once would share its connections
  // (two producers on one FIFO) and interleave their data. The issuing thread takes the launch's ticket; the work
  // waits for its turn (awaitTurn: every launch issued before it finished) and ends it (finishTurn), failed or not.
  // (A group puts a communicator's operations in one work: group.cc rejects a group that spreads them over streams.)
  uint32_t takeTicket() {
    const uint32_t t = issued_.load(std::memory_order_relaxed);  // one thread issues at a time (chorus.h)
    issued_.store(t + 1, std::memory_order_relaxed);
    return t;
  }
  // Returns at once when the turn has come (the common case: one stream); else waits on ctx (deadline, abort).
  void awaitTurn(uint32_t ticket, const WaitContext& ctx) {
    if (static_cast<int32_t>(finished_.load(std::memory_order_acquire) - ticket) >= 0) return;
    waitForTurn(ticket, ctx);
  }
  void finishTurn();

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
  std::unique_ptr<transport::TransportTable> transports_;
  std::unique_ptr<ConnectionSet> connections_;  // destroyed before the transports that made them (~Comm)
  coll::TopoView topo_;
  coll::TuningContext tuning_;
  bool oversubscribed_ = false;
  std::string rankTag_;  // "rank R"
  std::unique_ptr<FlightRecorder> recorder_;
  bool tracing_ = false;
  uint64_t commHash_ = 0;
  const uint64_t serial_;

  std::atomic<uint32_t> abort_{0};
  std::atomic<bool> announced_{false};
  uint64_t agreementCount_ = 0;
  uint32_t collSeq_ = 0;  // collectives run so far (one thread runs a communicator's work at a time)
  std::atomic<int> initState_{static_cast<int>(Status::kInProgress)};
  std::atomic<int> asyncError_{0};
  std::atomic<int> pending_{0};
  std::atomic<uint32_t> issued_{0};       // launches issued (takeTicket)
  std::atomic<uint32_t> finished_{0};     // launches finished (finishTurn); a futex word for waitForTurn
  std::atomic<uint32_t> turnWaiters_{0};  // threads sleeping in waitForTurn
  void waitForTurn(uint32_t ticket, const WaitContext& ctx);
  uint64_t childCount_ = 0;
  std::thread initThread_;
  std::mutex workerMu_;
  std::unique_ptr<Worker> worker_;

  mutable std::mutex errMu_;
  std::string lastError_;
  std::string firstAsyncError_;

#if CHORUS_BUILD_CUDA
 public:
  // CUDA executor: this communicator's device state (core/device_comm.h), made by its first device launch.
  // Destroyed first (~Comm): its watchdog uses the members above, and its kernels the device connections.
  std::unique_ptr<DeviceComm, DeviceCommDeleter> deviceState;
#endif
};

// Validates a chorusComm_t handle and returns the communicator; throws chorusInvalidArgument naming `arg`.
Comm* checkComm(const void* handle, const char* arg = "comm");

// This process's identity for PeerInfo::processId: pid plus a random salt (pids repeat across hosts).
uint64_t processId();

}  // namespace chorus::core
