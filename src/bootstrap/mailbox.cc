#include "bootstrap/mailbox.h"

#include "base/futex.h"

namespace chorus::bootstrap {

void Mailbox::bump() {
  word_.fetch_add(1, std::memory_order_release);
  futexWake(&word_);
}

void Mailbox::deposit(const MailKey& key, std::vector<uint8_t> message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    boxes_[key].push_back(std::move(message));
  }
  if (key.tag == kFailureNoticeTag) notices_.fetch_add(1, std::memory_order_release);
  bump();
}

bool Mailbox::peek(const MailKey& key, std::vector<uint8_t>* message) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = boxes_.find(key);
  if (it == boxes_.end()) return false;
  *message = it->second.front();
  return true;
}

bool Mailbox::tryTake(const MailKey& key, std::vector<uint8_t>* message) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = boxes_.find(key);
  if (it == boxes_.end()) return false;
  *message = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) boxes_.erase(it);
  return true;
}

void Mailbox::incomingPending(const PeerKey& p, int delta) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    peers_[p].pending += delta;
  }
  bump();
}

void Mailbox::incomingOpened(const PeerKey& p) {
  std::lock_guard<std::mutex> lock(mu_);
  ++peers_[p].open;
}

void Mailbox::incomingClosed(const PeerKey& p) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    PeerState& s = peers_[p];
    --s.open;
    s.closed = true;
  }
  bump();
}

void Mailbox::outgoingClosed(const PeerKey& p) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    peers_[p].closed = true;
  }
  bump();
}

bool Mailbox::peerGone(const PeerKey& p) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = peers_.find(p);
  if (it == peers_.end()) return false;
  return it->second.closed && it->second.open <= 0 && it->second.pending <= 0;
}

}  // namespace chorus::bootstrap
