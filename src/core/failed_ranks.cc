// The survivors' agreement on failed ranks.
//
// Protocol, in rounds: each survivor sends the set of ranks it believes failed (a byte per rank) to every rank
// not in that set, then receives the set of each such rank. A rank whose send or receive fails (its process is
// gone: closed bootstrap connection, refused connection) or that does not answer before the deadline (a stopped
// process) joins the set. When every set received equals the one sent and nothing was learnt, the round ends
// the call. Every survivor receives the same sets in a round (one from each survivor), so either all of them
// see only equal sets and stop together, or all see a difference and start the next round, where they all
// send the union. Without new failures the second round at the latest ends it.
#include "core/failed_ranks.h"

#include <string>

#include "base/error.h"
#include "base/logging.h"

namespace chorus::core {
namespace {

// Tags of the agreement sit beside the bootstrap's internal collectives (0xC4B0...): call and round in the low
// bits, so that a late message of one round is never taken for another's.
constexpr uint64_t kTagFailedRanks = 0xC4B1000000000000ull;

bool isPeerFailure(Status s) {
  return s == Status::kRemoteError || s == Status::kTimeout;
}

}  // namespace

std::vector<int> agreeOnFailedRanks(Comm& comm) {
  bootstrap::Bootstrap& b = comm.bootstrap();
  const int n = comm.nranks(), me = comm.rank();
  // No abort flag (the communicator is usually revoked) and no whole-communicator liveness probe (a dead
  // peer is what this call is about): each wait watches the one peer it waits for.
  WaitContext ctx = comm.waitContext("chorusCommGetFailedRanks");
  ctx.abort = nullptr;
  ctx.liveness = nullptr;
  std::vector<uint8_t> failed(n, 0);
  for (int p = 0; p < n; ++p) failed[p] = b.peerGone(p) ? 1 : 0;
  const uint64_t call = comm.nextAgreementTag();
  for (uint64_t round = 0;; ++round) {
    const uint64_t tag = kTagFailedRanks | (call << 20) | (round & 0xfffff);
    const std::vector<uint8_t> sent = failed;
    for (int p = 0; p < n; ++p) {
      if (p == me || sent[p]) continue;
      try {
        b.send(p, tag, sent.data(), sent.size(), ctx);
      } catch (const Error& e) {
        if (!isPeerFailure(e.status())) throw;
        CHORUS_LOG_INFO(kInit, "rank ", me, ": failed-ranks agreement: rank ", p, " failed: ", e.what());
        failed[p] = 1;
      }
    }
    bool same = true;
    for (int p = 0; p < n; ++p) {
      if (p == me || sent[p]) continue;
      std::vector<uint8_t> theirs;
      try {
        theirs = b.recv(p, tag, ctx);
      } catch (const Error& e) {
        if (!isPeerFailure(e.status())) throw;
        CHORUS_LOG_INFO(kInit, "rank ", me, ": failed-ranks agreement: rank ", p, " failed: ", e.what());
        failed[p] = 1;
        same = false;
        continue;
      }
      CHORUS_ENFORCE_EQ(theirs.size(), static_cast<size_t>(n), "failed-ranks set from rank ", p);
      if (theirs != sent) same = false;
      for (int r = 0; r < n; ++r) failed[r] |= theirs[r];
    }
    if (same && failed == sent) break;
  }
  if (failed[me]) {
    CHORUS_THROW(Status::kRemoteError, "rank ", me, ": chorusCommGetFailedRanks: a peer could not reach this rank and",
                 " reported it failed; this rank must leave the job");
  }
  std::vector<int> out;
  for (int r = 0; r < n; ++r) {
    if (failed[r]) out.push_back(r);
  }
  return out;
}

}  // namespace chorus::core
