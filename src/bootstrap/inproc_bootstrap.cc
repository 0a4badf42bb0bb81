// The bootstrap of a communicator whose ranks are all threads of this process (chorusCommInitAll): the ranks
// exchange their messages through one Mailbox in memory. Nothing listens on the network, and there is no
// peer to lose: a rank that stops taking part shows up as its peers' deadline.
#include <memory>
#include <string>

#include "base/error.h"
#include "bootstrap/bootstrap.h"
#include "bootstrap/failure_notice.h"
#include "bootstrap/hmac.h"
#include "bootstrap/mailbox.h"
#include "bootstrap/wire.h"

namespace chorus::bootstrap {
namespace {

class InProcessBootstrap : public Bootstrap {
 public:
  InProcessBootstrap(std::shared_ptr<Mailbox> mailbox, uint64_t commHash, int rank, int nranks)
      : mailbox_(std::move(mailbox)), commHash_(commHash), rank_(rank), nranks_(nranks) {}

  std::unique_ptr<Bootstrap> subset(const std::vector<int>& members, uint64_t childTag) override {
    CHORUS_CHECK_ARG(!members.empty(), "bootstrap subset: empty member list");
    int newRank = -1;
    for (size_t i = 0; i < members.size(); ++i) {
      const int m = members[i];
      CHORUS_CHECK_ARG(m >= 0 && m < nranks_, "bootstrap subset: member ", m, " is not a rank of a communicator of ",
                       nranks_);
      for (size_t j = 0; j < i; ++j) CHORUS_CHECK_ARG(members[j] != m, "bootstrap subset: rank ", m, " listed twice");
      if (m == rank_) newRank = static_cast<int>(i);
    }
    CHORUS_CHECK_ARG(newRank >= 0, "bootstrap subset: rank ", rank_, " is not among the members");
    // The child's messages carry its own hash: they never mix with the parent's or a sibling's.
    return std::make_unique<InProcessBootstrap>(mailbox_, childCommHash(commHash_, childTag), newRank,
                                                static_cast<int>(members.size()));
  }

  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }
  uint64_t commHash() const override { return commHash_; }

  void send(int peer, uint64_t tag, const void* data, size_t size, const WaitContext&) override {
    checkPeer(peer, "send to");
    const auto* p = static_cast<const uint8_t*>(data);
    mailbox_->deposit(MailKey{0, commHash_, peer, rank_, tag}, std::vector<uint8_t>(p, p + size));
  }

  std::vector<uint8_t> recv(int peer, uint64_t tag, const WaitContext& ctx) override {
    checkPeer(peer, "recv from");
    const MailKey key{0, commHash_, rank_, peer, tag};
    std::vector<uint8_t> msg;
    WaitContext c = ctx;
    c.what = detail::concat("rank ", rank_, ": bootstrap recv from rank ", peer, " (tag ", tag, ", in process)");
    Waiter w(c);
    for (;;) {
      const uint32_t observed = mailbox_->word()->load(std::memory_order_acquire);
      if (mailbox_->tryTake(key, &msg)) return msg;
      w.pause(mailbox_->word(), observed);
    }
  }

  void checkPeers() const override {}
  void awaitDelivered(int) const override {}  // messages go straight into the mailbox

  // Threads cannot die alone; an aborted or failed rank tells the others through the shared mailbox.
  bool peerGone(int peer) const override {
    checkPeer(peer, "liveness of");
    return false;
  }

  void announceFailure(Status cause, const std::string& why) override {
    const std::vector<uint8_t> notice = encodeFailureNotice(cause, why);
    for (int p = 0; p < nranks_; ++p) {
      if (p != rank_) mailbox_->deposit(MailKey{0, commHash_, p, rank_, kFailureNoticeTag}, notice);
    }
  }

  void checkFailureNotices() const override { bootstrap::checkFailureNotices(*mailbox_, 0, commHash_, rank_, nranks_); }

  SocketAddress peerAddress(int rank) const override {
    CHORUS_CHECK_ARG(rank >= 0 && rank < nranks_, "bootstrap peerAddress: rank ", rank, " out of range");
    return SocketAddress();  // in process: no address
  }

 private:
  void checkPeer(int peer, const char* op) const {
    CHORUS_CHECK_ARG(peer >= 0 && peer < nranks_, "rank ", rank_, ": bootstrap ", op, " rank ", peer,
                     ": peer out of range for ", nranks_, " ranks");
  }

  std::shared_ptr<Mailbox> mailbox_;
  uint64_t commHash_;
  int rank_;
  int nranks_;
};

}  // namespace

std::vector<std::unique_ptr<Bootstrap>> makeInProcessBootstraps(int nranks) {
  CHORUS_CHECK_ARG(nranks >= 1 && static_cast<uint64_t>(nranks) <= kMaxRanks, "nranks must be in 1..", kMaxRanks,
                   ", got ", nranks);
  auto mailbox = std::make_shared<Mailbox>();
  uint64_t hash = 0;
  randomBytes(&hash, sizeof(hash));
  std::vector<std::unique_ptr<Bootstrap>> out;
  for (int r = 0; r < nranks; ++r) out.push_back(std::make_unique<InProcessBootstrap>(mailbox, hash, r, nranks));
  return out;
}

}  // namespace chorus::bootstrap
