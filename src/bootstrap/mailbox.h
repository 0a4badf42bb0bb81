// Where the endpoint's service thread leaves received messages for the ranks of this process, and what it
// knows about the liveness of peer endpoints. Waiters sleep on one futex word that every change bumps.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace chorus::bootstrap {

// A message is addressed by the communicator that authenticated its connection (authHash: a message cannot
// be injected into a communicator whose secret the sender lacks), the communicator (commHash, differs for
// splits), destination rank, source rank and tag.
struct MailKey {
  uint64_t authHash = 0;
  uint64_t commHash = 0;
  int32_t dst = -1;
  int32_t src = -1;
  uint64_t tag = 0;
  auto tie() const { return std::tie(authHash, commHash, dst, src, tag); }
  bool operator<(const MailKey& o) const { return tie() < o.tie(); }
};

// A peer endpoint as seen through connections authenticated for one communicator family.
struct PeerKey {
  uint64_t authHash = 0;
  std::string endpoint;  // SocketAddress::toString()
  auto tie() const { return std::tie(authHash, endpoint); }
  bool operator<(const PeerKey& o) const { return tie() < o.tie(); }
};

// The tag of a failure notice: a rank whose communicator failed or was aborted or revoked tells every peer,
// which then fails its pending and next operations on that communicator at once (Bootstrap::announceFailure).
constexpr uint64_t kFailureNoticeTag = 0xC4B2000000000000ull;

class Mailbox {
 public:
  void deposit(const MailKey& key, std::vector<uint8_t> message);
  bool tryTake(const MailKey& key, std::vector<uint8_t>* message);
  // Copies the first message of key without taking it.
  bool peek(const MailKey& key, std::vector<uint8_t>* message) const;
  // How many failure notices were ever deposited (any communicator): a free test before a lookup.
  uint32_t notices() const { return notices_.load(std::memory_order_acquire); }

  // Liveness bookkeeping, called by the service thread. An incoming connection is "pending" from HELLO until
  // authenticated, then "open" until it closes.
  void incomingPending(const PeerKey& p, int delta);
  void incomingOpened(const PeerKey& p);
  void incomingClosed(const PeerKey& p);
  void outgoingClosed(const PeerKey& p);
  // A peer is gone once one of its connections closed and no incoming connection from it remains open or
  // pending: messages it sent before dying are read (and deposited) before its last connection's EOF.
  bool peerGone(const PeerKey& p) const;

  // Bumped (and woken) on every deposit and liveness change.
  const std::atomic<uint32_t>* word() const { return &word_; }

 private:
  struct PeerState {
    int open = 0;
    int pending = 0;
    bool closed = false;
  };
  void bump();

  mutable std::mutex mu_;
  std::map<MailKey, std::deque<std::vector<uint8_t>>> boxes_;
  std::map<PeerKey, PeerState> peers_;
  std::atomic<uint32_t> word_{0};
  std::atomic<uint32_t> notices_{0};
};

}  // namespace chorus::bootstrap
