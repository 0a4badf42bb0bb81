// The rendezvous roots this process's endpoint serves. For every id it answers (keyed by the id's authHash) a
// RendezvousRoot (rendezvous.h) collects the registrations that arrive; this class decides, under its own lock,
// which frames go back on which connection. It does no I/O: the endpoint's service thread feeds it and sends
// what it returns (endpoint.cc).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "base/socket.h"
#include "bootstrap/rendezvous.h"
#include "bootstrap/wire.h"

namespace chorus::bootstrap {

// Frames to send: (connection id, the frame's bytes).
using Replies = std::vector<std::pair<int, std::vector<uint8_t>>>;

class RootService {
 public:
  // Starts serving the rendezvous of authHash (a second call for the same id changes nothing).
  void serve(uint64_t authHash);

  struct RegisterOutcome {
    Replies replies;
    bool registered = false;    // the connection is now a member: its loss fails the rendezvous
    std::vector<int> released;  // connections that stop being members (the rendezvous completed)
  };
  // A REGISTER from connection `conn`, authenticated for authHash. `self` names this endpoint in the error
  // sent back when no rendezvous waits for the id.
  RegisterOutcome onRegister(int conn, uint64_t authHash, const Registration& reg, const SocketAddress& self);
  // Registered connections that closed before completion, as (authHash, connection): each fails its rendezvous,
  // and every member still connected is told why.
  Replies onLost(const std::vector<std::pair<uint64_t, int>>& lost);

 private:
  // Frames of `type` (TABLE or ERROR) for the member connections `ids` of `root`.
  static Replies repliesTo(const RendezvousRoot& root, const std::vector<int>& ids, FrameType type, uint64_t authHash);

  std::mutex mu_;
  std::map<uint64_t, RendezvousRoot> roots_;
};

}  // namespace chorus::bootstrap
