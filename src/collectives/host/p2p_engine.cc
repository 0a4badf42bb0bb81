#include "collectives/host/p2p_engine.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"

namespace chorus::coll {

void runP2p(const Plan& plan, const std::vector<const void*>& copies, const ExecEnv& env) {
  for (const SelfCopy& c : plan.selfCopies) memmove(c.dst, source(c, copies), c.bytes);
  // Per queue: the task in progress, its bytes done, and the connection.
  struct Progress {
    const P2pQueue* q;
    size_t cur = 0;
    size_t off = 0;
    transport::SendConnection* send = nullptr;
    transport::RecvConnection* recv = nullptr;
  };
  thread_local std::vector<Progress> queues;
  queues.clear();
  for (const P2pQueue& q : plan.queues) {
    Progress p{&q};
    if (q.send) {
      p.send = env.conns->sendConn(q.peer, kP2pLane);
    } else {
      p.recv = env.conns->recvConn(q.peer, kP2pLane);
    }
    queues.push_back(p);
  }
  if (queues.empty()) return;

  // The operation's context, watching every peer still owed a transfer as well.
  WaitContext ctx = *env.ctx;
  ctx.liveness = [&] {
    if (env.ctx->liveness) env.ctx->liveness();
    for (const Progress& p : queues) {
      if (p.cur == p.q->count) continue;
      if (p.send) p.send->checkPeer();
      if (p.recv) p.recv->checkPeer();
    }
  };
  Waiter waiter(ctx);
  for (;;) {
    bool pending = false;
    bool progress = false;
    for (Progress& p : queues) {
      while (p.cur < p.q->count) {
        const P2pTask& t = plan.tasks[p.q->first + p.cur];
        if (p.off == t.bytes) {
          ++p.cur;
          p.off = 0;
          continue;
        }
        if (t.send) {
          void* slot = p.send->tryAcquire();
          if (slot == nullptr) break;
          const size_t m = std::min(p.send->slotBytes(), t.bytes - p.off);
          memcpy(slot, static_cast<const char*>(source(t, copies)) + p.off, m);
          p.send->post(m);
          p.off += m;
        } else {
          size_t got = 0;
          const void* slot = p.recv->tryPeek(&got);
          if (slot == nullptr) break;
          const size_t m = std::min(p.recv->slotBytes(), t.bytes - p.off);
          if (got != m) {
            CHORUS_THROW(Status::kRemoteError, p.recv->what(), ": received a piece of ", got, " bytes where ", m,
                         " were expected: the send and the receive disagree on the size");
          }
          memcpy(static_cast<char*>(t.dst) + p.off, slot, m);
          p.recv->release();
          p.off += m;
        }
        progress = true;
      }
      if (p.cur < p.q->count) pending = true;
    }
    if (!pending) return;
    if (progress) {
      waiter.reset();
    } else {
      waiter.pause();
    }
  }
}

}  // namespace chorus::coll
