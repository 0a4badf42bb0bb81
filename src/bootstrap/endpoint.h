// The process's bootstrap endpoint: one listener (plus extra ones for roots at fixed addresses) and ONE
// service thread that serves every connection with poll() over non-blocking sockets. Each connection is a
// small state machine (handshake, then frames) fed by partial reads, so a slow or hostile peer delays nobody.
//
// Incoming connections carry DATA frames into the mailbox, or a REGISTER for a rendezvous root served here.
// Outgoing connections (to other endpoints) are made and written by the ranks' threads, one per (peer
// endpoint, authenticating communicator) and cached for the life of the process; the service thread only
// watches them for EOF, which is how a dead peer becomes an error within moments.
//
// Files: endpoint.cc (the service thread and incoming connections), outgoing.cc (the ranks' side: outgoing
// connections and blocking frame reads), root_service.h (rendezvous roots served here), handshake.h and
// wire.h (the protocol, without I/O).
#pragma once

#include <poll.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "base/socket.h"
#include "base/wait.h"
#include "bootstrap/handshake.h"
#include "bootstrap/hmac.h"
#include "bootstrap/mailbox.h"
#include "bootstrap/root_service.h"
#include "bootstrap/wire.h"

namespace chorus::bootstrap {

// How long the service thread tolerates peers that do not make progress.
struct EndpointLimits {
  int handshakeMs = 5000;         // from accept to a completed handshake
  int stallMs = 10000;            // a frame that stops arriving mid-way
  int connectMs = 5000;           // an endpoint that was up at rendezvous and refuses connections is dead
  int maxUnauthenticated = 1024;  // beyond this, the oldest unauthenticated connection is dropped
};

// An authenticated connection to a peer endpoint, written by the ranks' threads under `mu`.
struct OutConn {
  std::mutex mu;
  Socket sock;
  bool ready = false;
  std::atomic<bool> closed{false};
  PeerKey peer;
};

class Endpoint {
 public:
  // The process's endpoint, started on first use.
  static Endpoint& get();
  // Limits apply to connections accepted afterwards (tests shorten them).
  static void setLimits(const EndpointLimits& limits);
  static EndpointLimits limits();

  const SocketAddress& address() const { return address_; }
  Mailbox& mailbox() { return mailbox_; }

  // Makes connections authenticated with this secret acceptable (commHash = authHash).
  void registerSecret(uint64_t authHash, const Secret& secret);
  std::optional<Secret> secretFor(uint64_t authHash) const;
  // Serves the rendezvous root for authHash in the service thread.
  void serveRoot(uint64_t authHash);
  // Listens on one more address (a root at a fixed port). Throws chorusSystemError if it cannot bind.
  void addListener(const SocketAddress& addr);

  // The cached authenticated data connection to `peer`, connecting on first use. Throws chorusRemoteError
  // if the peer's endpoint cannot be reached or its connection is known closed.
  std::shared_ptr<OutConn> outgoing(const SocketAddress& peer, uint64_t authHash, const WaitContext& ctx);

  // Waits until the service thread has completed a whole poll round that began after this call (so it has read
  // what the sockets held at the call), or until `until`; true when it has.
  bool awaitFreshRound(const Deadline& until);

  // Blocking client side of the handshake, used by the ranks' threads.
  static Socket connectAuthenticated(const SocketAddress& addr, uint64_t authHash, const Secret& secret,
                                     Purpose purpose, const SocketAddress& self, const WaitContext& ctx,
                                     bool refusedIsFinal = false);
  // Reads one whole frame with a payload cap (blocking, honours ctx).
  static Frame readFrame(Socket& s, uint64_t maxPayload, const WaitContext& ctx);

 private:
  struct Conn;
  Endpoint();
  void run();
  void serveOnce(std::vector<pollfd>& fds);  // one poll() round
  void wake();
  void acceptAll(Socket& listener);
  void readConn(Conn& c);
  void handleFrame(Conn& c, Frame f);
  void handleRegister(Conn& c, const Frame& f);
  void sendReplies(Replies replies);
  // Tells the root service about registered connections that closed (lost_).
  void processLost();
  void queue(Conn& c, std::vector<uint8_t> bytes);
  void flush(Conn& c);
  void drop(Conn& c, const std::string& why);
  void closeConn(Conn& c);
  Conn* findConn(int id);

  SocketAddress address_;
  Mailbox mailbox_;
  RootService roots_;
  int wakeFd_ = -1;

  mutable std::mutex mu_;  // guards the fields below, shared with the ranks' threads
  std::map<uint64_t, Secret> secrets_;
  std::map<PeerKey, std::shared_ptr<OutConn>> outs_;
  std::vector<Socket> newListeners_;
  std::vector<std::shared_ptr<OutConn>> newWatches_;

  // Owned by the service thread.
  std::vector<Socket> listeners_;
  std::vector<std::unique_ptr<Conn>> conns_;
  int nextConnId_ = 1;
  std::vector<std::pair<uint64_t, int>> lost_;  // (authHash, connection) of registered ranks that left
  std::atomic<uint64_t> rounds_{0};             // poll rounds completed (awaitFreshRound)
  std::thread thread_;
};

}  // namespace chorus::bootstrap
