#include "core/comm.h"

#include <unistd.h>

#include <strings.h>
#include <algorithm>
#include <chrono>

#include <cstring>
#include <random>
#include <thread>

#include "base/error.h"
#include "base/futex.h"
#include "base/host_id.h"
#include "base/logging.h"
#include "base/params.h"
#include "base/process.h"
#include "base/shm.h"
#include "bootstrap/failure_notice.h"
#include "core/api_guard.h"
#include "core/handle_registry.h"
#include "core/oversubscription.h"
#include "core/topo_setup.h"
#include "core/trace.h"
#include "transport/fifo_geometry.h"

namespace chorus::core {

uint64_t processId() {
  static const uint64_t id = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ static_cast<uint64_t>(getpid());
  }();
  return id;
}

namespace {
std::atomic<uint64_t> commsMade{0};

// A wait's liveness check (WaitContext::liveness): the failure notices of one bootstrap. A type of its own, so
// that fillWaitContext can tell it is already in place.
struct NoticeCheck {
  const bootstrap::Bootstrap* bootstrap;
  void operator()() const { bootstrap->checkFailureNotices(); }
};
}  // namespace

Comm::Comm(int rank, int nranks, CommOptions options)
    : rank_(rank),
      nranks_(nranks),
      options_(std::move(options)),
      rankTag_("rank " + std::to_string(rank)),
      serial_(commsMade.fetch_add(1, std::memory_order_relaxed) + 1) {}

Comm::~Comm() {
  joinInitThread();
  worker_.reset();
#if CHORUS_BUILD_CUDA
  deviceState.reset();  // waits for this communicator's kernels: they use the device connections
#endif
  // Connections go before the transports that made them (the socket proxy serves them).
  connections_.reset();
  transports_.reset();
}

void Comm::joinInitThread() {
  if (initThread_.joinable() && initThread_.get_id() != std::this_thread::get_id()) initThread_.join();
}

// Ranks that outnumber cores yield this long before a futex sleep (see WaitContext::yieldNs).
constexpr int64_t kOversubscribedYieldNs = 1000000;

WaitContext Comm::waitContext(std::string what) const {
  WaitContext ctx;
  ctx.deadline = Deadline::afterMs(options_.timeoutMs);
  ctx.abort = &abort_;
  if (bootstrap_) {
    const bootstrap::Bootstrap* b = bootstrap_.get();
    ctx.liveness = [b] { b->checkFailureNotices(); };
  }
  ctx.spinNs = oversubscribed_ ? 0 : -1;
  ctx.yieldNs = oversubscribed_ ? kOversubscribedYieldNs : -1;
  ctx.what = rankTag_ + ": " + what;
  return ctx;
}

void Comm::fillWaitContext(WaitContext* ctx) const {
  renewDeadline(ctx);
  ctx->abort = &abort_;
  // Data-path waits watch only the peer they wait on (each connection's own check): a peer that finished its
  // part and exited cleanly is no error while its last data is still in flight. A rank whose operation
  // fails closes its connections (poisonConnections), so a failure reaches its neighbours at once.
  // A peer that announced a failure of this communicator (Bootstrap::announceFailure) ends every wait at once.
  // A thread reuses its context from call to call: the check already there for this bootstrap is kept (building
  // a std::function costs more than the rest of this function).
  if (bootstrap_) {
    const NoticeCheck* held = ctx->liveness.target<NoticeCheck>();
    if (held == nullptr || held->bootstrap != bootstrap_.get()) ctx->liveness = NoticeCheck{bootstrap_.get()};
  } else {
    ctx->liveness = nullptr;
  }
  ctx->spinNs = oversubscribed_ ? 0 : -1;
  ctx->yieldNs = oversubscribed_ ? kOversubscribedYieldNs : -1;
  if (ctx->what != rankTag_) ctx->what = rankTag_;
}

void Comm::setUp(std::unique_ptr<bootstrap::Bootstrap> bootstrap) {
  LogRankScope logRank(rank_);
  bootstrap_ = std::move(bootstrap);
  CHORUS_ENFORCE_EQ(bootstrap_->rank(), rank_, "bootstrap rank");
  CHORUS_ENFORCE_EQ(bootstrap_->nranks(), nranks_, "bootstrap size");
  commHash_ = bootstrap_->commHash();
  recorder_ = std::make_unique<FlightRecorder>(static_cast<int>(std::min<int64_t>(param::FrSize(), 1 << 20)), rank_,
                                               nranks_, commHash_);
  tracing_ = traceRequested();

  // Tell every rank who we are.
  transport::PeerInfo self;
  self.rank = rank_;
  self.device = options_.device;
  self.pid = getpid();
  self.hostHash = hostHash();
  self.processId = processId();
  unsigned cpu = 0, node = 0;
  if (getcpu(&cpu, &node) == 0) self.numaNode = static_cast<int>(node);
  gethostname(self.hostname, sizeof(self.hostname) - 1);
  self.cpuMask = currentCpuMask();
  peers_.assign(nranks_, transport::PeerInfo{});
  peers_[rank_] = self;
  bootstrap_->allgather(peers_.data(), sizeof(transport::PeerInfo), waitContext("exchanging peer information"));
  for (int r = 0; r < nranks_; ++r) {
    CHORUS_ENFORCE_EQ(peers_[r].rank, r, "peer information of rank ", r, " is inconsistent");
  }
  sweepDeadLocalPeers(false);  // from now on, a local peer that dies leaves nothing in /dev/shm

  // config->netName names the network between hosts: only the socket transport exists in this build.
  CHORUS_CHECK_ARG(options_.netName.empty() || strcasecmp(options_.netName.c_str(), "Socket") == 0, "config->netName '",
                   options_.netName, "' is not available (this build has: Socket)");
  transports_ = std::make_unique<transport::TransportTable>();
  for (int r = 0; r < nranks_; ++r) {
    if (r != rank_) transports_->select(self, peers_[r]);  // validates CHORUS_TRANSPORT for every pair now
  }
  ConnectionSet::Context cc;
  cc.rank = rank_;
  cc.peers = &peers_;
  cc.bootstrap = bootstrap_.get();
  cc.transports = transports_.get();
  // Connecting waits on one peer at a time: a rank that finished its part and exited must not fail the
  // connection this rank is making to another (every peer's liveness failed a reduce at 5 ranks on 2 simulated
  // hosts: a rank still connecting to the root found a finished rank gone).
  cc.waitContext = [this](std::string what) { return waitContext(std::move(what)); };
  connections_ = std::make_unique<ConnectionSet>(std::move(cc));
  topo_ = buildTopoView(peers_, rank_, options_.minChannels, options_.maxChannels);
  tuning_.nranks = nranks_;
  tuning_.nHosts = topo_.nHosts;
  tuning_.maxChannels = static_cast<int>(topo_.rings.size());
  tuning_.minChannels = options_.minChannels;
  tuning_.slotBytes = transport::fifoSlotBytes(options_.device >= 0);
  // The CUDA executor has not run the direct algorithms on a GPU yet: there the model leaves them out, and
  // only CHORUS_ALGO=direct selects them (docs/cuda.md).
  tuning_.directByModel = options_.device < 0;
  if (options_.device >= 0) tuning_.bytesPerChannel = size_t(512) << 10;
  tuning_.parallelChannels = options_.device >= 0;
  tuning_.algoSpec = param::Algo();
  tuning_.forcedChunk = param::ChunkSize();
  tuning_.id = coll::newTuningId();
  // More ranks on this host than CPUs to run them: a spinning waiter holds the core its peer needs, so waits
  // yield at once (as Open MPI's yield_when_idle). Decided from every local rank's mask: a rank bound to one
  // core is not oversubscribed when its peers are bound to others. CHORUS_SPIN_US, when set, still decides.
  oversubscribed_ =
      ranksOutnumberCpus(localCpuMasks(peers_, self.hostHash), onlineCpus()) && !param::text("CHORUS_SPIN_US");
  // There a host rank's tree waits far longer than a ring (TuningContext::treeByModel); a GPU runs its channels
  // side by side, so the device executor keeps the model's trees. Every rank must tune alike: decided from every
  // host's ranks, not from this rank's host (a 5-rank communicator on 2 hosts, 3 ranks oversubscribed on one and 2 not
  // on the other, ran trees on one host and rings on the other until the deadline).
  tuning_.treeByModel = options_.device >= 0 || !anyHostOversubscribed(peers_);
  if (logEnabled(LogLevel::kInfo, kInit)) {
    std::string line;
    for (int r = 0; r < nranks_; ++r) {
      if (r == rank_) continue;
      line += " " + std::to_string(r) + ":" + transportName(r);
    }
    CHORUS_LOG_INFO(kInit, "comm ", this, " rank ", rank_, " nranks ", nranks_, " commHash ", std::hex,
                    bootstrap_->commHash(), std::dec, oversubscribed_ ? " oversubscribed" : "",
                    " transports per peer:", line);
  }
}

std::string Comm::transportName(int peer) const {
  if (peer == rank_) return "self";
  return transports_->select(peers_[rank_], peers_[peer]).name();
}

coll::PlanContext Comm::planContext() const {
  coll::PlanContext p;
  p.rank = rank_;
  p.nranks = nranks_;
  p.topo = &topo_;
  p.slotBytes = transport::fifoSlotBytes(options_.device >= 0);
  p.p2pLanes = options_.device >= 0 ? coll::kP2pLanes : 1;
  return p;
}

Worker& Comm::worker() {
  std::lock_guard<std::mutex> lock(workerMu_);
  if (!worker_) worker_ = std::make_unique<Worker>();
  return *worker_;
}

void Comm::abort() {
  abort_.store(1);
}

void Comm::announceFailure(Status cause, const std::string& why) {
  if (announced_.exchange(true) || !bootstrap_) return;
  bootstrap_->announceFailure(cause, why);
}

std::string Comm::stalledPeers() const {
  std::string out;
  for (const transport::PeerInfo& p : peers_) {
    if (p.rank == rank_ || p.hostHash != peers_[rank_].hostHash || p.pid == peers_[rank_].pid) continue;
    if (ProcessWatch::stopped(p.pid)) {
      out += "; rank " + std::to_string(p.rank) + " (pid " + std::to_string(p.pid) + ") is stopped";
    }
  }
  return out;
}

Failure Comm::withFirstCause(Status s, std::string cause) const {
  // A cause that is a peer's notice already names what that peer found.
  const bool fromNotice = bootstrap::carriesFailureNotice(cause);
  if (s == Status::kTimeout) return Failure{s, fromNotice ? std::move(cause) : cause + stalledPeers()};
  if (s != Status::kRemoteError || !bootstrap_ || fromNotice) {
    return Failure{s, std::move(cause)};
  }
  auto notice = [this]() -> Failure {
    try {
      bootstrap_->checkFailureNotices();
    } catch (const Error& e) {
      return Failure{e.status(), e.what()};
    }
    return Failure{};
  };
  Failure first = notice();
  if (first.ok()) {
    bootstrap_->awaitDelivered(bootstrap::kDeliveryMs);
    first = notice();
  }
  if (first.ok()) return Failure{s, std::move(cause)};
  const std::string tag = rankTag_ + ": ";
  if (first.message.compare(0, tag.size(), tag) == 0) first.message.erase(0, tag.size());
  return Failure{first.status, cause + " (" + first.message + ")"};
}

void Comm::sweepDeadLocalPeers(bool now) {
  if (peers_.empty()) return;
  const transport::PeerInfo& self = peers_[rank_];
  for (int r = 0; r < static_cast<int>(peers_.size()); ++r) {
    const transport::PeerInfo& p = peers_[r];
    // Entries not received yet still hold rank -1.
    if (r == rank_ || p.rank != r || p.pid <= 0 || p.hostHash != self.hostHash || p.processId == self.processId) {
      continue;
    }
    watchPeerSegments(p.pid);
    if (now) sweepSegmentsOf(p.pid);
  }
}

void Comm::revoke() {
  abort_.store(kAbortRevoked);
  // Peers waiting on this rank fail now (closed FIFOs), and so does their next operation (the notice).
  poisonConnections();
  announceFailure(Status::kRemoteError, rankTag_ + " revoked the communicator (chorusCommRevoke)");
}

void Comm::poisonConnections() {
  if (connections_) connections_->closeHost();
}

void Comm::drainSends(const WaitContext& ctx) {
  if (connections_) connections_->drainSends(ctx);
}

void Comm::recordAsyncError(Status s, const std::string& msg) {
  int expected = 0;
  const bool first = asyncError_.compare_exchange_strong(expected, static_cast<int>(s));
  std::lock_guard<std::mutex> lock(errMu_);
  if (first) firstAsyncError_ = msg;
  lastError_ = msg;
}

std::string Comm::firstAsyncError() const {
  std::lock_guard<std::mutex> lock(errMu_);
  return firstAsyncError_;
}

void Comm::setLastError(const std::string& msg) {
  std::lock_guard<std::mutex> lock(errMu_);
  lastError_ = msg;
}

std::string Comm::lastError() const {
  std::lock_guard<std::mutex> lock(errMu_);
  return lastError_;
}

void Comm::waitIdle(const WaitContext& ctx) const {
  Waiter w(ctx);
  while (pending_.load() != 0) w.pause();
}

void Comm::waitForTurn(uint32_t ticket, const WaitContext& ctx) {
  // Rare (launches of one communicator on several streams at once): the wait names itself in a timeout's message.
  WaitContext named = ctx;
  named.what = rankTag_ + ": waiting for this communicator's operations issued before, on another stream";
  Waiter w(named);
  turnWaiters_.fetch_add(1);
  struct Leave {
    std::atomic<uint32_t>& waiters;
    ~Leave() { waiters.fetch_sub(1); }
  } leave{turnWaiters_};
  for (;;) {
    const uint32_t seen = finished_.load();
    if (static_cast<int32_t>(seen - ticket) >= 0) return;
    w.pause(&finished_, seen);  // sleeps in slices (base/wait.h): a missed wake costs a slice, never the deadline
  }
}

void Comm::finishTurn() {
  // Both sides sequentially consistent: a waiter that registered before this increment is woken, and one that
  // registers after it sees the new count before it sleeps.
  finished_.fetch_add(1);
  if (turnWaiters_.load() != 0) futexWake(&finished_);
}

Comm* checkComm(const void* handle, const char* arg) {
  CHORUS_CHECK_ARG(handle != nullptr, arg, " is NULL");
  CHORUS_CHECK_ARG(commHandles().contains(handle), arg,
                   " is not a live communicator (destroyed, or not from chorusCommInit*)");
  Comm* c = const_cast<Comm*>(static_cast<const Comm*>(handle));
  noteCallComm(c);  // an error of this call is also the communicator's (chorusGetLastError)
  return c;
}

}  // namespace chorus::core
