// The root's side of the rendezvous as a pure state machine: it collects registrations (rank, nranks,
// endpoint) arriving on connections and decides when the table is complete or the rendezvous has failed.
// The endpoint's service thread drives it and does the I/O (endpoint.cc).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/socket.h"
#include "base/status.h"
#include "bootstrap/wire.h"

namespace chorus::bootstrap {

class RendezvousRoot {
 public:
  enum class Result { kWaiting, kComplete, kFailed };

  // A rank registered on connection `conn`. After kFailed, every registered connection (including this one)
  // gets the error; a failed rendezvous stays failed.
  Result add(int conn, const Registration& r);
  // A registered connection closed before completion: the rank is gone, the rendezvous fails.
  Result lost(int conn);

  bool failed() const { return failed_; }
  Status status() const { return status_; }
  const std::string& error() const { return error_; }
  // (connection, rank) of every registered rank.
  const std::vector<std::pair<int, int>>& members() const { return members_; }
  // Endpoint address of every rank, by rank (valid once complete).
  const std::vector<SocketAddress>& table() const { return table_; }

 private:
  Result fail(Status s, std::string msg);

  int nranks_ = -1;
  // Registered endpoints by rank. A map, not a vector of nranks: nranks is what a peer claims, and memory
  // must grow with the registrations that really arrive.
  std::map<int, SocketAddress> slots_;
  std::vector<SocketAddress> table_;
  std::vector<std::pair<int, int>> members_;
  bool failed_ = false;
  Status status_ = Status::kSuccess;
  std::string error_;
};

}  // namespace chorus::bootstrap
