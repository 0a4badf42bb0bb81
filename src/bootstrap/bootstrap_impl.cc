// A communicator's view of the process endpoint: the rendezvous client, send/recv over the mailbox and
// cached connections, and the small collectives built on them.
#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "base/logging.h"
#include "bootstrap/bootstrap.h"
#include "bootstrap/endpoint.h"
#include "bootstrap/failure_notice.h"

namespace chorus::bootstrap {
namespace {

class BootstrapImpl : public Bootstrap {
 public:
  BootstrapImpl(Endpoint& ep, const Secret& secret, uint64_t authHash, uint64_t commHash, int rank,
                std::vector<SocketAddress> table)
      : ep_(ep), secret_(secret), authHash_(authHash), commHash_(commHash), rank_(rank), table_(std::move(table)) {
    keys_.reserve(table_.size());
    for (const auto& a : table_) keys_.push_back(a.toString());
    self_ = ep_.address().toString();
  }

  std::unique_ptr<Bootstrap> subset(const std::vector<int>& members, uint64_t childTag) override {
    CHORUS_CHECK_ARG(!members.empty(), "bootstrap subset: empty member list");
    int newRank = -1;
    std::vector<SocketAddress> table;
    for (size_t i = 0; i < members.size(); ++i) {
      int m = members[i];
      CHORUS_CHECK_ARG(m >= 0 && m < nranks(), "bootstrap subset: member ", m, " is not a rank of a communicator of ",
                       nranks());
      for (size_t j = 0; j < i; ++j) CHORUS_CHECK_ARG(members[j] != m, "bootstrap subset: rank ", m, " listed twice");
      if (m == rank_) newRank = static_cast<int>(i);
      table.push_back(table_[static_cast<size_t>(m)]);
    }
    CHORUS_CHECK_ARG(newRank >= 0, "bootstrap subset: rank ", rank_, " is not among the members");
    return std::make_unique<BootstrapImpl>(ep_, secret_, authHash_, childCommHash(commHash_, childTag), newRank,
                                           std::move(table));
  }

  int rank() const override { return rank_; }
  int nranks() const override { return static_cast<int>(table_.size()); }
  uint64_t commHash() const override { return commHash_; }

  void send(int peer, uint64_t tag, const void* data, size_t size, const WaitContext& ctx) override {
    checkPeer(peer, "send to");
    CHORUS_CHECK_ARG(size <= kMaxDataPayload, "rank ", rank_, ": bootstrap send to rank ", peer, ": ", size,
                     " bytes exceed the bootstrap message limit of ", kMaxDataPayload);
    WaitContext c = ctx;
    // The caller's words say what the message is for; the tag only when there are none.
    c.what = ctx.what.empty() ? detail::concat("rank ", rank_, ": bootstrap send to rank ", peer, " (tag ", tag, ")")
                              : detail::concat(ctx.what, " (bootstrap message to rank ", peer, ")");
    if (isLocal(peer)) {
      // Ranks sharing this endpoint: straight into the mailbox, no socket.
      const auto* p = static_cast<const uint8_t*>(data);
      ep_.mailbox().deposit(MailKey{authHash_, commHash_, peer, rank_, tag}, std::vector<uint8_t>(p, p + size));
      return;
    }
    auto conn = connection(peer, c);
    FrameHeader h;
    h.type = FrameType::kData;
    h.commHash = commHash_;
    h.src = rank_;
    h.dst = peer;
    h.tag = tag;
    h.length = size;
    uint8_t hdr[kHeaderBytes];
    encodeHeader(h, hdr);
    std::lock_guard<std::mutex> lock(conn->mu);
    if (conn->closed.load()) {
      CHORUS_THROW(Status::kRemoteError, c.what, ": connection to ", keys_[peer], " closed by peer");
    }
    conn->sock.sendAll(hdr, sizeof(hdr), c);
    if (size > 0) conn->sock.sendAll(data, size, c);
  }

  std::vector<uint8_t> recv(int peer, uint64_t tag, const WaitContext& ctx) override {
    checkPeer(peer, "recv from");
    WaitContext c = ctx;
    c.what = ctx.what.empty() ? detail::concat("rank ", rank_, ": bootstrap recv from rank ", peer, " (tag ", tag, ")")
                              : detail::concat(ctx.what, " (bootstrap message from rank ", peer, ")");
    MailKey key{authHash_, commHash_, rank_, peer, tag};
    Mailbox& mb = ep_.mailbox();
    std::vector<uint8_t> msg;
    if (mb.tryTake(key, &msg)) return msg;
    // Hold a connection to the peer while waiting: its EOF is how we learn that the peer died, even if it
    // never connected to us. A peer that cannot be connected to any more (refused, reset) may have finished its
    // part and left after sending this message: what it sent reached this host before its connections closed,
    // so the message is taken once the endpoint has read what the sockets hold (EarlyExitProcs: a rank that
    // finished the peer-information exchange and exited failed the rank still receiving its last block).
    if (!isLocal(peer)) {
      try {
        connection(peer, c);
      } catch (const Error&) {
        ep_.awaitFreshRound(Deadline::afterMs(kDeliveryMs).min(c.deadline));
        if (mb.tryTake(key, &msg)) return msg;
        throw;
      }
    }
    PeerKey pk{authHash_, keys_[peer]};
    Waiter w(c);
    for (;;) {
      uint32_t observed = mb.word()->load(std::memory_order_acquire);
      if (mb.tryTake(key, &msg)) return msg;
      if (!isLocal(peer) && mb.peerGone(pk)) {
        // Its messages are deposited before its last connection's EOF, maybe after the look above.
        if (mb.tryTake(key, &msg)) return msg;
        CHORUS_THROW(Status::kRemoteError, c.what, ": connection closed by peer (", keys_[peer], ")");
      }
      w.pause(mb.word(), observed);
    }
  }

  void checkPeers() const override {
    Mailbox& mb = ep_.mailbox();
    for (int p = 0; p < nranks(); ++p) {
      if (p == rank_ || keys_[p] == self_) continue;
      if (mb.peerGone(PeerKey{authHash_, keys_[p]})) {
        CHORUS_THROW(Status::kRemoteError, "rank ", rank_, ": bootstrap peer rank ", p, " is gone: its endpoint ",
                     keys_[p], " closed the connection");
      }
    }
  }

  void announceFailure(Status cause, const std::string& why) override {
    WaitContext ctx;
    ctx.deadline = Deadline::afterMs(500);  // a notice is best effort: never hold a failing rank long
    const std::vector<uint8_t> notice = encodeFailureNotice(cause, why);
    for (int p = 0; p < nranks(); ++p) {
      if (p == rank_ || peerGone(p)) continue;
      try {
        send(p, kFailureNoticeTag, notice.data(), notice.size(), ctx);
      } catch (const Error&) {
        // That peer is gone or unreachable: it needs no notice.
      }
    }
  }

  void checkFailureNotices() const override {
    bootstrap::checkFailureNotices(ep_.mailbox(), authHash_, commHash_, rank_, nranks());
  }

  void awaitDelivered(int maxMs) const override { ep_.awaitFreshRound(Deadline::afterMs(maxMs)); }

  bool peerGone(int peer) const override {
    checkPeer(peer, "liveness of");
    if (peer == rank_ || isLocal(peer)) return false;
    return ep_.mailbox().peerGone(PeerKey{authHash_, keys_[static_cast<size_t>(peer)]});
  }

  SocketAddress peerAddress(int rank) const override {
    CHORUS_CHECK_ARG(rank >= 0 && rank < nranks(), "bootstrap peerAddress: rank ", rank, " out of range");
    return table_[static_cast<size_t>(rank)];
  }

 private:
  void checkPeer(int peer, const char* op) const {
    CHORUS_CHECK_ARG(peer >= 0 && peer < nranks(), "rank ", rank_, ": bootstrap ", op, " rank ", peer,
                     ": peer out of range for ", nranks(), " ranks");
  }
  bool isLocal(int peer) const { return keys_[static_cast<size_t>(peer)] == self_; }

  std::shared_ptr<OutConn> connection(int peer, const WaitContext& ctx) {
    return ep_.outgoing(table_[static_cast<size_t>(peer)], authHash_, ctx);
  }

  Endpoint& ep_;
  Secret secret_;
  uint64_t authHash_;  // the id's commHash: authenticates connections, shared by all splits
  uint64_t commHash_;
  int rank_;
  std::vector<SocketAddress> table_;
  std::vector<std::string> keys_;
  std::string self_;
};

}  // namespace

std::unique_ptr<Bootstrap> Bootstrap::init(const UniqueId& id, int rank, int nranks, const WaitContext& ctx) {
  CHORUS_CHECK_ARG(nranks >= 1 && static_cast<uint64_t>(nranks) <= kMaxRanks, "nranks must be in 1..", kMaxRanks,
                   ", got ", nranks);
  CHORUS_CHECK_ARG(rank >= 0 && rank < nranks, "rank ", rank, " is out of range for nranks=", nranks);
  CHORUS_CHECK_ARG(id.root.valid(), "commId: the unique id has no root address");
  Endpoint& ep = Endpoint::get();
  Secret secret{};
  memcpy(secret.data(), id.secret, secret.size());
  CHORUS_CHECK_ARG(commHashOf(secret) == id.commHash, "commId: the unique id's commHash does not match its secret");
  // Peers authenticate their connections to this endpoint with the id's secret.
  ep.registerSecret(id.commHash, secret);

  WaitContext c = ctx;
  c.what = detail::concat("rank ", rank, ": bootstrap rendezvous with root ", id.root.toString());
  Socket s = Endpoint::connectAuthenticated(id.root, id.commHash, secret, Purpose::kRendezvous, ep.address(), c);
  Registration reg{rank, nranks, ep.address()};
  FrameHeader h;
  h.type = FrameType::kRegister;
  h.commHash = id.commHash;
  h.src = rank;
  auto payload = encodeRegistration(reg);
  auto frame = encodeFrame(h, payload.data(), payload.size());
  s.sendAll(frame.data(), frame.size(), c);
  Frame reply = Endpoint::readFrame(s, kMaxDataPayload, c);
  if (reply.header.type == FrameType::kError) {
    Status st;
    std::string text;
    if (!decodeErrorPayload(reply.payload, &st, &text)) {
      CHORUS_THROW(Status::kRemoteError, c.what, ": malformed error reply");
    }
    CHORUS_THROW(st, c.what, " failed: ", text);
  }
  if (reply.header.type != FrameType::kTable) {
    CHORUS_THROW(Status::kRemoteError, c.what, ": unexpected ", frameTypeName(reply.header.type), " reply");
  }
  auto table = decodeTable(reply.payload);
  if (!table || static_cast<int>(table->size()) != nranks) {
    CHORUS_THROW(Status::kRemoteError, c.what, ": malformed table (", reply.payload.size(), " bytes for ", nranks,
                 " ranks)");
  }
  CHORUS_LOG_INFO(kBootstrap, "rank ", rank, "/", nranks, ": bootstrap rendezvous complete, endpoint ",
                  ep.address().toString());
  return std::make_unique<BootstrapImpl>(ep, secret, id.commHash, id.commHash, rank, std::move(*table));
}

}  // namespace chorus::bootstrap
