#include "bootstrap/root_service.h"

#include "base/logging.h"
#include "bootstrap/hmac.h"

namespace chorus::bootstrap {

namespace {

std::vector<int> memberIds(const RendezvousRoot& root) {
  std::vector<int> ids;
  for (const auto& m : root.members()) ids.push_back(m.first);
  return ids;
}

}  // namespace

void RootService::serve(uint64_t authHash) {
  std::lock_guard<std::mutex> lock(mu_);
  roots_.try_emplace(authHash);
}

Replies RootService::repliesTo(const RendezvousRoot& root, const std::vector<int>& ids, FrameType type,
                               uint64_t authHash) {
  std::vector<uint8_t> payload =
      type == FrameType::kTable ? encodeTable(root.table()) : encodeErrorPayload(root.status(), root.error());
  Replies out;
  for (int id : ids) {
    FrameHeader h;
    h.type = type;
    h.commHash = authHash;
    for (const auto& mem : root.members()) {
      if (mem.first == id) h.dst = mem.second;
    }
    out.emplace_back(id, encodeFrame(h, payload.data(), payload.size()));
  }
  return out;
}

RootService::RegisterOutcome RootService::onRegister(int conn, uint64_t authHash, const Registration& reg,
                                                     const SocketAddress& self) {
  RegisterOutcome out;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = roots_.find(authHash);
  if (it == roots_.end()) {
    auto payload =
        encodeErrorPayload(Status::kInvalidUsage, "no rendezvous is waiting for this id at " + self.toString() +
                                                      " (it completed already or the id is stale)");
    FrameHeader h;
    h.type = FrameType::kError;
    h.commHash = authHash;
    out.replies.emplace_back(conn, encodeFrame(h, payload.data(), payload.size()));
    return out;
  }
  out.registered = true;
  RendezvousRoot& root = it->second;
  const bool wasFailed = root.failed();
  const RendezvousRoot::Result result = root.add(conn, reg);
  CHORUS_LOG_INFO(kBootstrap, "bootstrap root ", hashHex(authHash), ": rank ", reg.rank, "/", reg.nranks,
                  " registered from ", reg.endpoint.toString());
  if (result == RendezvousRoot::Result::kFailed) {
    // A rendezvous that failed earlier answers only the newcomer; one failing now tells every member.
    if (!wasFailed) {
      CHORUS_LOG_WARN(kBootstrap, "bootstrap root ", hashHex(authHash), ": rendezvous failed: ", root.error());
    }
    out.replies = repliesTo(root, wasFailed ? std::vector<int>{conn} : memberIds(root), FrameType::kError, authHash);
  } else if (result == RendezvousRoot::Result::kComplete) {
    // The id is single use: its members no longer count as registered, and the root is forgotten.
    out.released = memberIds(root);
    out.replies = repliesTo(root, out.released, FrameType::kTable, authHash);
    roots_.erase(it);
  }
  return out;
}

Replies RootService::onLost(const std::vector<std::pair<uint64_t, int>>& lost) {
  Replies replies;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [authHash, id] : lost) {
    auto it = roots_.find(authHash);
    if (it == roots_.end()) continue;
    const bool wasFailed = it->second.failed();
    it->second.lost(id);
    if (!wasFailed && it->second.failed()) {
      CHORUS_LOG_WARN(kBootstrap, "bootstrap root ", hashHex(authHash), ": rendezvous failed: ", it->second.error());
      for (auto& r : repliesTo(it->second, memberIds(it->second), FrameType::kError, authHash)) {
        replies.push_back(std::move(r));
      }
    }
  }
  return replies;
}

}  // namespace chorus::bootstrap
