// The two user ends of a network connection: host FIFOs whose far side is the network proxy (proxy.h). They
// add how to reach the proxy (it sleeps in poll() on an eventfd, not on a futex), how to report a failed
// connection, and a FifoDriver through which a thread waiting on the FIFO moves the connection itself; dropping
// an end tells the proxy to finish (sender: send what was posted) and close.
#pragma once

#include <memory>

#include "transport/fifo.h"
#include "transport/net/proxy.h"

namespace chorus::transport::net {

// What both ends share: the proxy and the connection's state, and the FifoDriver that forwards to the proxy.
class ProxyEnd : public FifoDriver {
 public:
  ProxyEnd(std::shared_ptr<Proxy> proxy, std::shared_ptr<NetConn> state)
      : proxy_(std::move(proxy)), state_(std::move(state)) {}
  ~ProxyEnd() {
    state_->userGone.store(true, std::memory_order_release);
    proxy_->wake();
  }
  ProxyEnd(const ProxyEnd&) = delete;
  ProxyEnd& operator=(const ProxyEnd&) = delete;

  bool claim() override { return proxy_->claim(*state_); }
  bool drive() override { return proxy_->drive(); }
  void block(uint64_t ns) override { proxy_->block(ns); }
  void unclaim() override { proxy_->unclaim(); }
  void poke() override { proxy_->poke(*state_); }

 protected:
  // The driver, or nullptr when the plugin keeps every call on the proxy thread.
  FifoDriver* driver() { return proxy_->userDrives() ? this : nullptr; }
  std::shared_ptr<Proxy> proxy_;
  std::shared_ptr<NetConn> state_;
};

class SendConnection : public transport::SendConnection, private ProxyEnd {
 public:
  SendConnection(std::shared_ptr<Proxy> proxy, std::shared_ptr<NetConn> state)
      : transport::SendConnection(state->fifo.control(), state->what, [s = state.get()] { s->check(); }),
        ProxyEnd(std::move(proxy), std::move(state)) {
    setDriver(driver());
  }

 protected:
  // Only called while the proxy sleeps (its flag is raised): a small message goes out at once from here.
  void wakeConsumer() override { proxy_->posted(*state_); }
};

class RecvConnection : public transport::RecvConnection, private ProxyEnd {
 public:
  RecvConnection(std::shared_ptr<Proxy> proxy, std::shared_ptr<NetConn> state)
      : transport::RecvConnection(state->fifo.control(), state->what, [s = state.get()] { s->check(); }),
        ProxyEnd(std::move(proxy), std::move(state)) {
    setDriver(driver());
  }

 protected:
  // Only called while the proxy sleeps with every slot in use: the freed slot gets its receive from here.
  void wakeProducer() override { proxy_->released(*state_); }
};

}  // namespace chorus::transport::net
