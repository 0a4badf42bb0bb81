#include "core/launch.h"

#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>

#include "base/error.h"
#include "base/logging.h"
#include "base/per_thread.h"
#include "collectives/host/host_executor.h"
#include "collectives/plan/plan_reuse.h"
#include "core/check_mode.h"
#include "core/comm.h"
#include "core/red_ops.h"
#include "core/trace.h"

namespace chorus::core {

namespace {

// Names the work in messages: "AllReduce(count 1024, float32)" or "group of 3 operations". Written into a
// per-thread buffer, so naming costs no allocation.
const char* describe(const std::vector<coll::CollOp>& ops) {
  thread_local char buf[160];
  if (ops.size() != 1) {
    snprintf(buf, sizeof(buf), "group of %zu operations", ops.size());
    return buf;
  }
  const coll::CollOp& op = ops[0];
  int n =
      snprintf(buf, sizeof(buf), "%s(count %zu, %s", coll::collName(op.type), op.count, reduce::dtypeName(op.dtype));
  if (coll::isSendRecv(op.type)) {
    n += snprintf(buf + n, sizeof(buf) - n, ", %s rank %d", op.type == coll::CollType::kSend ? "to" : "from", op.peer);
  }
  snprintf(buf + n, sizeof(buf) - n, ")");
  return buf;
}

// PreMulSum operations become plain sums over scaled copies of their inputs, made here as the operation starts
// (a device-resident scalar is read now), so planning and the executors never see them. The copies are kept
// per thread with their capacity: a fresh buffer per call would fault in every page of it each time.
const std::vector<coll::CollOp>& withPreMulSumApplied(const std::vector<coll::CollOp>& ops, int nranks) {
  bool any = false;
  for (const coll::CollOp& op : ops) any = any || op.preMulSum;
  if (!any) return ops;
  thread_local std::vector<coll::CollOp> scaled;
  thread_local std::vector<std::vector<char>> scratch;
  scaled = ops;
  size_t used = 0;
  for (coll::CollOp& op : scaled) {
    if (!op.preMulSum) continue;
    if (scratch.size() == used) scratch.emplace_back();
    op = applyPreMulSum(op, nranks, &scratch[used++]);
  }
  return scaled;
}

// One plan a thread keeps, with what it was made for (0 while it is not whole: planWork threw) and the operations
// as they are now. The communicator's serial stands for its plan context too, which is fixed once it is set up.
struct PlanMemo {
  uint64_t plannedFor = 0;  // Comm::serial()
  std::vector<coll::CollOp> plannedOps;
  coll::Plan plan;
  uint64_t lastUsed = 0;  // ThreadState::launches when it last served
  // Whether the plan's connections were made once: a communicator keeps its connections for its life, so a memoised
  // plan skips ConnectionSet::connect (its check of every connection was 3 % of an 8-byte broadcast).
  bool connected = false;
  coll::PlanSetup setup;  // the executor's decisions for the plan, made on its first run (host_executor.h)
};

// Plans kept per thread: a loop that alternates a few different operations (an all-reduce and a broadcast, the
// gradient buckets of a training step, two communicators) finds each one's plan.
constexpr int kPlanMemos = 4;

// What executeWork keeps per thread.
struct ThreadState {
  WaitContext ctx;
  uint64_t ctxFor = 0;  // Comm::serial() of the communicator that ctx was filled for
  PlanMemo memos[kPlanMemos];
  int lastMemo = 0;  // the memo that served the last launch
  uint64_t launches = 0;
  uint64_t plansMade = 0;  // planWork calls, for plansMadeOnThisThread
};

// The memo that holds the plan of `ops`. A plan depends on the operations and the communicator alone, and a thread
// that repeats operations it ran among its last kPlanMemos plans, on the same buffers or on buffers all moved by one
// distance, moves that plan instead (collectives/plan/plan_reuse.h): planWork is about 400 of the 2,700
// instructions of an 8-byte blocking broadcast.
PlanMemo& planOnce(const Comm& comm, const std::vector<coll::CollOp>& ops, ThreadState* state) {
  const uint64_t now = ++state->launches;
  // The memo that served last first: a loop that repeats one operation then compares it once, not with every memo
  // before it (movedBy made up a tenth of a blocking 32-byte broadcast's instructions when its memo came fourth).
  auto reuse = [&](int i) {
    PlanMemo& m = state->memos[i];
    std::ptrdiff_t shift = 0;
    if (m.plannedFor != comm.serial() || !coll::movedBy(m.plannedOps, ops, &shift)) return false;
    coll::moveBuffers(&m.plan, shift);
    for (size_t k = 0; k < ops.size(); ++k) {
      m.plannedOps[k].sendbuff = ops[k].sendbuff;
      m.plannedOps[k].recvbuff = ops[k].recvbuff;
    }
    m.lastUsed = now;
    state->lastMemo = i;
    return true;
  };
  if (reuse(state->lastMemo)) return state->memos[state->lastMemo];
  int oldest = 0;
  for (int i = 0; i < kPlanMemos; ++i) {
    if (i != state->lastMemo && reuse(i)) return state->memos[i];
    if (state->memos[i].lastUsed < state->memos[oldest].lastUsed) oldest = i;
  }
  // Otherwise the least recently used memo is planned again (its storage reused).
  PlanMemo& m = state->memos[oldest];
  m.plannedFor = 0;
  m.connected = false;
  m.setup.clear();
  ++state->plansMade;
  coll::planWork(ops, comm.planContext(), &m.plan);
  m.plannedOps = ops;  // reuses its capacity
  m.plannedFor = comm.serial();
  m.lastUsed = now;
  state->lastMemo = oldest;
  return m;
}

// One communicator's share: plan it, connect what the plan lists, run it.
void executeWork(const CommWork& w) {
  Comm& comm = *w.comm;
  LogRankScope logRank(comm.rank());
  // Reused per thread: an operation on a warm communicator allocates nothing here.
  ThreadState& state = perThread<ThreadState>();
  WaitContext& ctx = state.ctx;
  // A thread's operations mostly repeat on one communicator: then only the deadline is new (filling the rest compared
  // a string and a std::function's target, about a tenth of the launch's own instructions).
  if (state.ctxFor == comm.serial()) {
    comm.renewDeadline(&ctx);
  } else {
    comm.fillWaitContext(&ctx);
    state.ctxFor = comm.serial();
  }
  comm.awaitTurn(w.ticket, ctx);
  if (comm.options().checkMode) checkMatchingCalls(comm, w.ops, ctx);
  PlanMemo& memo = planOnce(comm, withPreMulSumApplied(w.ops, comm.nranks()), &state);
  const coll::Plan& plan = memo.plan;
  if (!memo.connected) {
    comm.connections().connect(plan.connections, transport::FifoMemory::kHost);
    memo.connected = true;
  }
  coll::ExecEnv env;
  env.rank = comm.rank();
  env.nranks = comm.nranks();
  env.topo = &comm.topo();
  env.conns = &comm.connections();
  env.ctx = &ctx;
  env.firstSeq = comm.takeCollectiveSeqs(static_cast<uint32_t>(plan.colls.size()));
  coll::runPlan(plan, env, &memo.setup);
}

}  // namespace

uint64_t plansMadeOnThisThread() {
  return perThread<ThreadState>().plansMade;
}

namespace {

// Runs one communicator's work on this thread and ends it (its flight-recorder entries, its turn, its pending count),
// failed or not. Returns its failure.
Failure runWork(const CommWork& w) {
  Failure f;
  FlightRecorder* fr = w.comm->recorder();
  // One clock read per state change of the work, shared by its operations.
  if (fr != nullptr && fr->enabled() && !w.startedWhenQueued) {
    const int64_t now = FlightRecorder::nowUs();
    for (const coll::CollOp& op : w.ops) fr->started(op.recordSeq, now);
  }
  std::optional<OpTrace> trace;
  if (w.comm->tracing() && !w.ops.empty()) trace.emplace(w.comm->rank(), w.comm->commHash());
  try {
    executeWork(w);
  } catch (const Error& e) {
    // "rank R: AllReduce(count N, float32): <cause>"; a wait's message starts with the rank already.
    const std::string tag = "rank " + std::to_string(w.comm->rank()) + ": ";
    std::string cause = e.what();
    if (cause.compare(0, tag.size(), tag) == 0) cause.erase(0, tag.size());
    // A connection closed by a peer that failed: its notice, sent before it closed, names the first cause.
    f = w.comm->withFirstCause(e.status(), std::move(cause));
    f.message = tag + describe(w.ops) + ": " + f.message;
    // Peers learn of the failure first through the notice, then through the closed connections. Invalid usage
    // found before any data moved (CHORUS_CHECK's fingerprints, seen alike by every rank) leaves the
    // communicator usable, as the header promises.
    if (f.status != Status::kInvalidUsage) {
      w.comm->announceFailure(f.status, f.message);
      w.comm->poisonConnections();
    }
    CHORUS_LOG_WARN(kColl, f.message);
  } catch (const std::exception& e) {
    f = Failure{Status::kInternalError, "rank " + std::to_string(w.comm->rank()) + ": internal error: " + e.what()};
  }
  if (fr != nullptr && fr->enabled()) {
    const int64_t now = FlightRecorder::nowUs();
    for (const coll::CollOp& op : w.ops) fr->finished(op.recordSeq, f.ok(), now);
    // What this rank ran last, for scripts/chorus_fr.py to line up with the other ranks' dumps.
    if (f.status == Status::kTimeout || f.status == Status::kRemoteError) fr->dump(f.message);
  }
  // The next launch of the communicator may start (on whichever thread waits for it), whatever this one's outcome.
  w.comm->finishTurn();
  if (trace) trace->finish(w.ops[0], w.ops.size(), w.comm->nranks(), f.ok());
  if (!f.ok()) w.comm->recordAsyncError(f.status, f.message);
  w.comm->opsFinished(static_cast<int>(w.ops.size()));
  return f;
}

}  // namespace

Failure executeLaunch(const CommWork* works, size_t n) {
  if (n == 1) return runWork(works[0]);  // the common launch: no other thread takes part
  Failure first;
  std::mutex mu;
  auto runOne = [&](const CommWork& w) {
    Failure f = runWork(w);
    if (!f.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      if (first.ok()) first = std::move(f);
    }
  };
  Latch latch(static_cast<int>(n) - 1);
  for (size_t i = 1; i < n; ++i) {
    const CommWork* w = &works[i];
    w->comm->worker().submit([&, w] {
      runOne(*w);
      latch.countDown();
    });
  }
  runOne(works[0]);
  latch.wait();
  return first;
}

}  // namespace chorus::core
