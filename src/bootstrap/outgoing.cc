// The client side of the endpoint, run by the ranks' threads: authenticated connections to other endpoints
// (cached, one per peer endpoint and authenticating communicator) and blocking frame reads.
#include <sys/socket.h>

#include "base/error.h"
#include "bootstrap/endpoint.h"

namespace chorus::bootstrap {

Frame Endpoint::readFrame(Socket& s, uint64_t maxPayload, const WaitContext& ctx) {
  uint8_t hdr[kHeaderBytes];
  s.recvAll(hdr, sizeof(hdr), ctx);
  Frame f;
  if (auto err = decodeHeader(hdr, maxPayload, &f.header)) {
    CHORUS_THROW(Status::kRemoteError, ctx.what, ": malformed frame from ", s.peerAddress().toString(), ": ", *err);
  }
  f.payload.resize(f.header.length);
  if (!f.payload.empty()) s.recvAll(f.payload.data(), f.payload.size(), ctx);
  return f;
}

Socket Endpoint::connectAuthenticated(const SocketAddress& addr, uint64_t authHash, const Secret& secret,
                                      Purpose purpose, const SocketAddress& self, const WaitContext& ctx,
                                      bool refusedIsFinal) {
  Socket s = Socket::connect(addr, ctx, refusedIsFinal);
  Nonce nonce{};
  randomBytes(nonce.data(), nonce.size());
  ClientHandshake hs(secret, authHash, purpose, self, nonce);
  auto hello = hs.hello();
  s.sendAll(hello.data(), hello.size(), ctx);
  Frame challenge = readFrame(s, kMaxHandshakePayload, ctx);
  std::vector<uint8_t> response;
  if (auto err = hs.onChallenge(challenge, &response)) {
    CHORUS_THROW(Status::kRemoteError, ctx.what, ": handshake with ", addr.toString(), " failed: ", *err);
  }
  s.sendAll(response.data(), response.size(), ctx);
  return s;
}

std::shared_ptr<OutConn> Endpoint::outgoing(const SocketAddress& peer, uint64_t authHash, const WaitContext& ctx) {
  PeerKey key{authHash, peer.toString()};
  std::shared_ptr<OutConn> conn;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = outs_[key];
    if (!slot) {
      slot = std::make_shared<OutConn>();
      slot->peer = key;
    }
    conn = slot;
  }
  std::lock_guard<std::mutex> lock(conn->mu);
  if (conn->ready) return conn;
  auto secret = secretFor(authHash);
  CHORUS_ENFORCE(secret.has_value(), "no secret registered for communicator ", hashHex(authHash));
  // The peer's endpoint was listening when it joined the rendezvous: if it refuses connections for
  // connectMs it is gone, which must not wait for the (long) communicator deadline.
  WaitContext c = ctx;
  c.deadline = ctx.deadline.min(Deadline::afterMs(limits().connectMs));
  try {
    // A refusal is final: every endpoint listens before it joins a rendezvous, so a refused connection means
    // its process is gone (a full backlog drops the SYN instead of refusing it).
    conn->sock = connectAuthenticated(peer, authHash, *secret, Purpose::kData, address_, c, /*refusedIsFinal=*/true);
  } catch (const Error& e) {
    if (e.status() == Status::kTimeout && !ctx.deadline.expired()) {
      CHORUS_THROW(Status::kRemoteError, ctx.what, ": the endpoint ", peer.toString(),
                   " cannot be reached (process gone?): ", e.what());
    }
    throw;
  }
  conn->ready = true;
  {
    std::lock_guard<std::mutex> l(mu_);
    newWatches_.push_back(conn);
  }
  wake();
  return conn;
}

}  // namespace chorus::bootstrap
