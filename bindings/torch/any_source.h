// Receives from any source, built on named receives. Chorus (like NCCL) matches a receive with a named
// sender and has no probe, so the sender must say where its messages go: with CHORUS_TORCH_ANY_SOURCE=1
// every send of the group first posts a key "message k from s to d" in the group's store, and a receive
// from any source waits for a sender whose next message to this rank is announced and not yet received,
// then receives from it by name. Off by default: it costs a store round trip per send.
//
// Counts are kept in issue order (the queue calls these under its lock, while issuing).
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace chorus_torch {

class AnySourceLedger {
 public:
  AnySourceLedger(c10::intrusive_ptr<c10d::Store> store, int rank, int size, std::chrono::milliseconds timeout);

  // CHORUS_TORCH_ANY_SOURCE=1 in the environment.
  static bool enabled();

  // Announces this rank's next message to dst.
  void announceSend(int dst);
  // Counts a message received from src by name.
  void countRecv(int src);
  // Waits (up to the group's timeout) until some rank's next message to this rank is announced, claims it
  // and returns that rank.
  int claimAnySource();

 private:
  std::string key(int src, int dst, uint64_t k) const;

  c10::intrusive_ptr<c10d::Store> store_;
  const int rank_;
  const std::chrono::milliseconds timeout_;
  std::vector<uint64_t> sent_;      // messages sent to each rank
  std::vector<uint64_t> received_;  // messages received from each rank
};

}  // namespace chorus_torch
