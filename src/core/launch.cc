#include "core/launch.h"

#include <memory>
#include <mutex>

#include "base/error.h"
#include "base/logging.h"
#include "collectives/host/host_executor.h"
#include "core/check_mode.h"
#include "core/comm.h"

namespace chorus::core {

namespace {

// Names the work in messages: "AllReduce(count 1024, float32)" or "group of 3 operations".
std::string describe(const std::vector<coll::CollOp>& ops) {
  if (ops.size() != 1) return "group of " + std::to_string(ops.size()) + " operations";
  const coll::CollOp& op = ops[0];
  std::string s = std::string(coll::collName(op.type)) + "(count " + std::to_string(op.count) + ", " +
                  reduce::dtypeName(op.dtype);
  if (op.type == coll::CollType::kSend || op.type == coll::CollType::kRecv) {
    s += op.type == coll::CollType::kSend ? ", to rank " : ", from rank ";
    s += std::to_string(op.peer);
  }
  return s + ")";
}

// One communicator's share: connect what is missing, run the collectives in order, then the send/recv
// tasks together.
void executeWork(const CommWork& w) {
  Comm& comm = *w.comm;
  LogRankScope logRank(comm.rank());
  WaitContext ctx = comm.waitContext(describe(w.ops));
  if (comm.options().checkMode) checkMatchingCalls(comm, w.ops, ctx);
  std::vector<coll::ConnKey> keys;
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
  std::vector<std::vector<char>> scratch;  // copies of in-place all-to-all inputs
  for (const coll::CollOp& op : w.ops) {
    if (!coll::isP2pOp(op)) {
      coll::runCollective(op, env);
      continue;
    }
    coll::CollOp p = op;
    if (op.type == coll::CollType::kAllToAll && op.sendbuff == op.recvbuff && op.count > 0) {
      // In place: what this rank sends must be read before it is overwritten by what it receives.
      const size_t bytes = op.count * reduce::dtypeSize(op.dtype) * comm.nranks();
      scratch.emplace_back(static_cast<const char*>(op.sendbuff), static_cast<const char*>(op.sendbuff) + bytes);
      p.sendbuff = scratch.back().data();
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
      std::string msg = e.what();  // waits name the rank already
      const std::string tag = "rank " + std::to_string(w.comm->rank()) + ": ";
      if (msg.find(tag) == std::string::npos) msg = tag + msg;
      for (size_t at; (at = msg.find(tag + tag)) != std::string::npos;) msg.erase(at, tag.size());
      w.comm->recordAsyncError(e.status(), msg);
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
