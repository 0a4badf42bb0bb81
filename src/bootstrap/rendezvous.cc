#include "bootstrap/rendezvous.h"

#include "base/error.h"

namespace chorus::bootstrap {

RendezvousRoot::Result RendezvousRoot::fail(Status s, std::string msg) {
  if (!failed_) {
    failed_ = true;
    status_ = s;
    error_ = std::move(msg);
  }
  return Result::kFailed;
}

RendezvousRoot::Result RendezvousRoot::add(int conn, const Registration& r) {
  // The connection joins the member list even on failure so that it receives the error reply.
  members_.emplace_back(conn, r.rank);
  if (failed_) return Result::kFailed;
  if (r.nranks <= 0 || static_cast<uint64_t>(r.nranks) > kMaxRanks) {
    return fail(Status::kInvalidArgument,
                detail::concat("rank ", r.rank, " passed nranks=", r.nranks, " (must be 1..", kMaxRanks, ")"));
  }
  if (nranks_ < 0) {
    nranks_ = r.nranks;
  } else if (r.nranks != nranks_) {
    return fail(Status::kInvalidArgument, detail::concat("ranks disagree on nranks: rank ", r.rank, " passed nranks=",
                                                         r.nranks, " but an earlier rank passed nranks=", nranks_));
  }
  if (r.rank < 0 || r.rank >= nranks_) {
    return fail(Status::kInvalidArgument, detail::concat("rank ", r.rank, " is out of range for nranks=", nranks_));
  }
  auto [it, inserted] = slots_.try_emplace(r.rank, r.endpoint);
  if (!inserted) {
    return fail(Status::kInvalidArgument, detail::concat("two processes claim rank ", r.rank, " (endpoints ",
                                                         it->second.toString(), " and ", r.endpoint.toString(), ")"));
  }
  if (static_cast<int>(slots_.size()) < nranks_) return Result::kWaiting;
  for (auto& [rank, addr] : slots_) table_.push_back(addr);
  return Result::kComplete;
}

RendezvousRoot::Result RendezvousRoot::lost(int conn) {
  for (auto it = members_.begin(); it != members_.end(); ++it) {
    if (it->first != conn) continue;
    int rank = it->second;
    members_.erase(it);
    if (failed_) return Result::kFailed;
    return fail(Status::kRemoteError, detail::concat("rank ", rank, " closed its connection to the root before all ",
                                                     nranks_, " ranks joined (process died?)"));
  }
  return failed_ ? Result::kFailed : Result::kWaiting;
}

}  // namespace chorus::bootstrap
