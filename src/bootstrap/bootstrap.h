// The bootstrap: out-of-band communication between the ranks of a communicator over authenticated TCP, used
// to create communicators (rendezvous), exchange connection descriptors, and for small collectives before
// (and beside) the data transports. It is a layer of its own (src/bootstrap, beside src/transport): it uses
// only src/base, and the communicator (src/core) uses it.
//
// Every process has one Endpoint (endpoint.h): a listener plus a service thread that reads framed messages
// from every connection into mailboxes keyed by (communicator, source rank, tag). A Bootstrap is one
// communicator's view of it: it knows each rank's endpoint address and sends to any rank directly.
//
// Rendezvous: the root (the process that called chorusGetUniqueId, or rank 0 of chorusCommInitFromEnv)
// collects every rank's endpoint address and returns the full table to all of them.
//
// Security: every connection, to the root or to a rank's endpoint, is authenticated by a mutual HMAC-SHA256
// challenge-response over fresh nonces with the communicator's 128-bit secret, which never crosses the wire.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/socket.h"
#include "base/status.h"
#include "base/wait.h"

namespace chorus::bootstrap {

constexpr size_t kSecretBytes = 16;
constexpr size_t kUniqueIdBytes = 128;
// How long a wait for what already reached this host lasts at most (Bootstrap::awaitDelivered, a receive whose
// sender has left): normally two rounds of the endpoint's service thread, well under a millisecond; this bounds a
// starved thread.
constexpr int kDeliveryMs = 2000;

// The contents of a chorusUniqueId (128 bytes on the wire format of the C API, see unique_id.h).
struct UniqueId {
  SocketAddress root;                 // where the root listens
  uint8_t secret[kSecretBytes] = {};  // authenticates every bootstrap connection
  uint64_t commHash = 0;              // public name of the communicator, derived from the secret
};

// Creates a new unique id whose root is this process's endpoint (started on first use, on the interface
// CHORUS_SOCKET_IFNAME selects), and registers the root role for it.
UniqueId createUniqueId();
// Encodes / decodes the 128 public bytes. decode throws chorusInvalidArgument ("commId") on a corrupted or
// foreign id (bad magic, version, checksum or address family).
void encodeUniqueId(const UniqueId& id, uint8_t out[kUniqueIdBytes]);
UniqueId decodeUniqueId(const uint8_t in[kUniqueIdBytes]);

// Serves the rendezvous for an id at a fixed address (chorusCommInitFromEnv's rank 0 at CHORUS_ADDR).
// Returns the id ranks should use. The secret comes from `secretHex` (CHORUS_SECRET) or, when empty, is
// derived from the address (which authenticates nothing; chorusrun always sets a secret).
UniqueId serveRendezvousAt(const SocketAddress& addr, const std::string& secretHex);
// The id ranks other than rank 0 use to join a rendezvous at addr (same derivation as above).
UniqueId rendezvousIdFor(const SocketAddress& addr, const std::string& secretHex);

// A bootstrap for `nranks` ranks that are all threads of this process (chorusCommInitAll): element r is rank
// r's. Messages go through memory; no socket or listener is opened, and subsets stay in memory.
std::vector<std::unique_ptr<class Bootstrap>> makeInProcessBootstraps(int nranks);

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;

  // Joins the communicator named by `id` as `rank` of `nranks`: registers with the root, waits for the
  // table of all ranks' endpoints. Throws chorusTimeout at ctx's deadline, chorusRemoteError when the root
  // or a peer goes away, chorusInvalidArgument when ranks disagree on nranks or two claim the same rank.
  static std::unique_ptr<Bootstrap> init(const UniqueId& id, int rank, int nranks, const WaitContext& ctx);

  // A bootstrap for a subset of this one's ranks: new rank i is old rank members[i]. Every member calls it
  // with the same members and childTag (unique per split of this communicator); no network round trip.
  virtual std::unique_ptr<Bootstrap> subset(const std::vector<int>& members, uint64_t childTag) = 0;

  virtual int rank() const = 0;
  virtual int nranks() const = 0;
  virtual uint64_t commHash() const = 0;

  // Sends a message to `peer` with a tag. Returns once the message is written to the peer's connection
  // (it does not wait for the peer to receive it). Throws chorusRemoteError if the peer is gone.
  virtual void send(int peer, uint64_t tag, const void* data, size_t size, const WaitContext& ctx) = 0;
  // Receives the next message from `peer` with `tag` (messages with the same (peer, tag) arrive in order).
  virtual std::vector<uint8_t> recv(int peer, uint64_t tag, const WaitContext& ctx) = 0;

  // The small collectives, built on send and recv (bootstrap_collectives.cc).
  // All ranks contribute `bytes` bytes at data + rank*bytes; afterwards every rank holds all of them.
  virtual void allgather(void* data, size_t bytes, const WaitContext& ctx);
  // Root's `bytes` bytes at data are copied to every rank's data.
  virtual void broadcast(void* data, size_t bytes, int root, const WaitContext& ctx);
  // Returns once every rank has entered the barrier.
  virtual void barrier(const WaitContext& ctx);

  // Throws chorusRemoteError naming the rank if any peer's endpoint is known to be gone (its connection
  // closed); cheap, for liveness probes of waits.
  virtual void checkPeers() const = 0;
  // Tells every peer that this rank's communicator failed (or was aborted or revoked), best effort and without
  // waiting for any peer: their checkFailureNotices() then throws. `cause` (the status of the first error) and
  // `why` travel with the notice (failure_notice.h).
  virtual void announceFailure(Status cause, const std::string& why) = 0;
  // If a peer announced a failure of this communicator, throws naming the peer and its reason: chorusTimeout
  // where the peer's first cause was a timeout, chorusRemoteError otherwise (failure_notice.h says why). Costs
  // one atomic load while no notice arrived in this process (the data path calls it every few ms).
  virtual void checkFailureNotices() const = 0;
  // Waits, at most `maxMs`, until every message that reached this host for this rank before the call is in the
  // mailbox (the endpoint's service thread reads sockets on its own schedule, which a loaded machine delays).
  // A rank that fails sends its notice before it closes its connections or exits: once its closed connection
  // is seen, this makes checkFailureNotices() see the notice too, without guessing how long to wait.
  virtual void awaitDelivered(int maxMs) const = 0;

  // True when `peer`'s endpoint is known to be gone (a connection to it closed and none from it remains open);
  // never true for a rank of this process. Does not wait or connect.
  virtual bool peerGone(int peer) const = 0;
  // Endpoint address of a rank (for logs and for transports that reuse it).
  virtual SocketAddress peerAddress(int rank) const = 0;
};

}  // namespace chorus::bootstrap
