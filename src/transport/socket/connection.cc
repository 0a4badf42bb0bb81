#include "transport/socket/connection.h"

#include "base/error.h"
#include "transport/socket/proxy.h"

namespace chorus::transport::socket {

ConnState::ConnState(bool isSend, int nslots, size_t slotBytes, uint32_t nstreams, std::string name)
    : send(isSend), fifo(nslots, slotBytes), what(std::move(name)), streams(nstreams) {}

void ConnState::fail(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (reason_.empty()) reason_ = reason;
  }
  dead = true;
  fifoClose(fifo.control());
}

void ConnState::check() const {
  if (fifo.control()->closed.load(std::memory_order_acquire) == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  CHORUS_THROW(Status::kRemoteError, what, ": ", reason_.empty() ? "the connection was closed" : reason_);
}

// The PeerCheck reads the state the proxy records; the FIFO's closed flag is what the proxy sets on failure.
SendConnection::SendConnection(std::shared_ptr<Proxy> proxy, std::shared_ptr<ConnState> state)
    : transport::SendConnection(state->fifo.control(), state->what, [s = state.get()] { s->check(); }),
      proxy_(std::move(proxy)),
      state_(std::move(state)) {}

SendConnection::~SendConnection() {
  // The proxy finishes writing what was posted, then closes the streams (the receiver sees a clean EOF).
  state_->userGone.store(true, std::memory_order_release);
  proxy_->wake();
}

void SendConnection::wakeConsumer() {
  proxy_->wake();
}

RecvConnection::RecvConnection(std::shared_ptr<Proxy> proxy, std::shared_ptr<ConnState> state)
    : transport::RecvConnection(state->fifo.control(), state->what, [s = state.get()] { s->check(); }),
      proxy_(std::move(proxy)),
      state_(std::move(state)) {}

RecvConnection::~RecvConnection() {
  state_->userGone.store(true, std::memory_order_release);
  proxy_->wake();
}

void RecvConnection::wakeProducer() {
  proxy_->wake();
}

}  // namespace chorus::transport::socket
