#include "core/launch.h"

#include <cstdio>
#include <memory>
#include <mutex>

#include "base/error.h"
#include "base/logging.h"
#include "collectives/host/host_executor.h"
#include "core/check_mode.h"
#include "core/comm.h"
#include "core/red_ops.h"

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
  if (op.type == coll::CollType::kSend || op.type == coll::CollType::kRecv) {
    n += snprintf(buf + n, sizeof(buf) - n, ", %s rank %d", op.type == coll::CollType::kSend ? "to" : "from", op.peer);
  }
  snprintf(buf + n, sizeof(buf) - n, ")");
  return buf;
}

// One communicator's share: connect what is missing, run the collectives in order, then the send/recv
// tasks together.
void executeWork(const CommWork& w) {
  Comm& comm = *w.comm;
  LogRankScope logRank(comm.rank());
  // Reused per thread: an operation on a warm communicator allocates nothing here.
  thread_local WaitContext ctx;
  comm.fillWaitContext(&ctx);
  if (comm.options().checkMode) checkMatchingCalls(comm, w.ops, ctx);
  thread_local std::vector<coll::ConnKey> keys;
  keys.clear();
  for (const coll::CollOp& op : w.ops) {
    coll::addNeededConnections(op, comm.topo(), comm.rank(), comm.nranks(), &keys);
  }
  comm.ensureConnected(keys);
  coll::ExecEnv env;
  env.rank = comm.rank();
  env.nranks = comm.nranks();
  env.topo = &comm.topo();
  env.conns = &comm;
  env.ctx = &ctx;
  std::vector<coll::P2pTask> tasks;
  // Copies of in-place all-to-all inputs (and PreMulSum's scaled inputs), kept per thread with their capacity: a fresh
  // buffer per call would fault in every page of it each time (a 128 MiB in-place all-to-all ran at a third of the
  // out-of-place speed). The memory stays with the thread, up to the largest in-place all-to-all it ran.
  thread_local std::vector<std::vector<char>> scratch;
  size_t scratchUsed = 0;
  auto nextScratch = [&]() -> std::vector<char>& {
    if (scratch.size() == scratchUsed) scratch.emplace_back();
    return scratch[scratchUsed++];
  };
  for (const coll::CollOp& op : w.ops) {
    if (!coll::isP2pOp(op)) {
      // PreMulSum: the scaled inputs are made here, as the operation starts (a device-resident scalar is read
      // now), so the executor runs a plain sum.
      coll::runCollective(op.preMulSum ? applyPreMulSum(op, comm.nranks(), &nextScratch()) : op, env);
      continue;
    }
    coll::CollOp p = op;
    if (op.type == coll::CollType::kAllToAll && op.sendbuff == op.recvbuff && op.count > 0) {
      // In place: what this rank sends must be read before it is overwritten by what it receives.
      const size_t bytes = op.count * reduce::dtypeSize(op.dtype) * comm.nranks();
      std::vector<char>& copy = nextScratch();
      copy.assign(static_cast<const char*>(op.sendbuff), static_cast<const char*>(op.sendbuff) + bytes);
      p.sendbuff = copy.data();
    }
    coll::addP2pTasks(p, comm.rank(), comm.nranks(), &tasks);
  }
  if (!tasks.empty()) coll::runP2p(tasks, env);
}

}  // namespace

LaunchResult executeLaunch(const std::vector<CommWork>& works) {
  LaunchResult result;
  std::mutex mu;
  auto runOne = [&](const CommWork& w) {
    try {
      executeWork(w);
    } catch (const Error& e) {
      // "rank R: AllReduce(count N, float32): <cause>"; a wait's message starts with the rank already.
      const std::string tag = "rank " + std::to_string(w.comm->rank()) + ": ";
      std::string cause = e.what();
      if (cause.compare(0, tag.size(), tag) == 0) cause.erase(0, tag.size());
      std::string msg = tag + describe(w.ops) + ": " + cause;
      w.comm->recordAsyncError(e.status(), msg);
      w.comm->poisonConnections();
      CHORUS_LOG_WARN(kColl, msg);
      std::lock_guard<std::mutex> lock(mu);
      if (result.status == Status::kSuccess) result = {e.status(), msg};
    } catch (const std::exception& e) {
      std::string msg = "rank " + std::to_string(w.comm->rank()) + ": internal error: " + e.what();
      w.comm->recordAsyncError(Status::kInternalError, msg);
      std::lock_guard<std::mutex> lock(mu);
      if (result.status == Status::kSuccess) result = {Status::kInternalError, msg};
    }
    for (size_t i = 0; i < w.ops.size(); ++i) w.comm->opFinished();
  };
  if (works.size() == 1) {
    runOne(works[0]);
    return result;
  }
  Latch latch(static_cast<int>(works.size()) - 1);
  for (size_t i = 1; i < works.size(); ++i) {
    const CommWork* w = &works[i];
    w->comm->worker().submit([&, w] {
      runOne(*w);
      latch.countDown();
    });
  }
  runOne(works[0]);
  latch.wait();
  return result;
}

}  // namespace chorus::core
