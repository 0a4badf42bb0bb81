// The bootstrap's small collectives, written once over send and recv for every Bootstrap implementation.
#include <cstring>

#include "base/error.h"
#include "bootstrap/bootstrap.h"

namespace chorus::bootstrap {
namespace {

// Tags of the internal collectives sit in the top half of the tag space. Messages with one (peer, tag) are
// delivered in order, so consecutive collectives may reuse their tag.
constexpr uint64_t kTagAllgather = 0xC4B0000000000001ull;
constexpr uint64_t kTagBroadcast = 0xC4B0000000000002ull;
constexpr uint64_t kTagBarrier = 0xC4B0000000000003ull;

void expectSize(const std::vector<uint8_t>& msg, size_t bytes, int rank, int peer, const char* op) {
  if (msg.size() != bytes) {
    CHORUS_THROW(Status::kInvalidUsage, "rank ", rank, ": bootstrap ", op, ": rank ", peer, " sent ", msg.size(),
                 " bytes, expected ", bytes, " (ranks disagree on the size)");
  }
}

}  // namespace

// Ring: in step s, pass on the block received in step s-1 (own block first). n-1 steps, each rank sends and
// receives one block per step.
void Bootstrap::allgather(void* data, size_t bytes, const WaitContext& ctx) {
  const int n = nranks();
  const int me = rank();
  if (n == 1 || bytes == 0) return;
  auto* base = static_cast<uint8_t*>(data);
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  for (int s = 0; s < n - 1; ++s) {
    const int sendBlock = (me - s + n) % n;
    const int recvBlock = (me - s - 1 + 2 * n) % n;
    send(next, kTagAllgather, base + static_cast<size_t>(sendBlock) * bytes, bytes, ctx);
    auto msg = recv(prev, kTagAllgather, ctx);
    expectSize(msg, bytes, me, prev, "allgather");
    memcpy(base + static_cast<size_t>(recvBlock) * bytes, msg.data(), bytes);
  }
}

void Bootstrap::broadcast(void* data, size_t bytes, int root, const WaitContext& ctx) {
  CHORUS_CHECK_ARG(root >= 0 && root < nranks(), "rank ", rank(), ": bootstrap broadcast: root ", root,
                   " out of range for ", nranks(), " ranks");
  if (nranks() == 1) return;
  if (rank() == root) {
    for (int p = 0; p < nranks(); ++p) {
      if (p != root) send(p, kTagBroadcast, data, bytes, ctx);
    }
    return;
  }
  auto msg = recv(root, kTagBroadcast, ctx);
  expectSize(msg, bytes, rank(), root, "broadcast");
  if (bytes > 0) memcpy(data, msg.data(), bytes);
}

// Dissemination barrier: in round k, signal rank+2^k and wait for rank-2^k; after ceil(log2 n) rounds every
// rank has heard, transitively, from all others.
void Bootstrap::barrier(const WaitContext& ctx) {
  const int n = nranks();
  const int me = rank();
  for (int d = 1; d < n; d *= 2) {
    uint8_t token = 0;
    send((me + d) % n, kTagBarrier, &token, 1, ctx);
    auto msg = recv((me - d + n) % n, kTagBarrier, ctx);
    expectSize(msg, 1, me, (me - d + n) % n, "barrier");
  }
}

}  // namespace chorus::bootstrap
