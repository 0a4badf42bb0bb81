// The two user ends of a network connection: host FIFOs whose far side is the network proxy thread
// (proxy.h). They add how to wake the proxy (it sleeps on an eventfd, not on a futex) and how to report a
// failed connection; dropping an end tells the proxy to finish (sender: send what was posted) and close.
#pragma once

#include <memory>

#include "transport/fifo.h"
#include "transport/net/proxy.h"

namespace chorus::transport::net {

class SendConnection : public transport::SendConnection {
 public:
  SendConnection(std::shared_ptr<Proxy> proxy, std::shared_ptr<NetConn> state)
      : transport::SendConnection(state->fifo.control(), state->what, [s = state.get()] { s->check(); }),
        proxy_(std::move(proxy)),
        state_(std::move(state)) {}
  ~SendConnection() override {
    state_->userGone.store(true, std::memory_order_release);
    proxy_->wake();
  }

 protected:
  void wakeConsumer() override { proxy_->wake(); }

 private:
  std::shared_ptr<Proxy> proxy_;
  std::shared_ptr<NetConn> state_;
};

class RecvConnection : public transport::RecvConnection {
 public:
  RecvConnection(std::shared_ptr<Proxy> proxy, std::shared_ptr<NetConn> state)
      : transport::RecvConnection(state->fifo.control(), state->what, [s = state.get()] { s->check(); }),
        proxy_(std::move(proxy)),
        state_(std::move(state)) {
    setBytesOnly();  // the plugin moves the payload; the operation's tag does not travel
  }
  ~RecvConnection() override {
    state_->userGone.store(true, std::memory_order_release);
    proxy_->wake();
  }

 protected:
  void wakeProducer() override { proxy_->wake(); }

 private:
  std::shared_ptr<Proxy> proxy_;
  std::shared_ptr<NetConn> state_;
};

}  // namespace chorus::transport::net
