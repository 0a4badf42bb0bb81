// The socket transport: TCP between hosts (or anywhere, with CHORUS_TRANSPORT=socket). Each connection is
// CHORUS_SOCKET_NSTREAMS TCP streams with TCP_NODELAY; both ends keep a FIFO in local memory and this
// transport's proxy thread (proxy.h) moves slots between the FIFOs and the streams.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "transport/transport.h"

namespace chorus::transport::socket {

class Proxy;

class SocketTransport : public Transport {
 public:
  SocketTransport();
  ~SocketTransport() override;

  const char* name() const override { return "socket"; }
  bool canConnect(const PeerInfo& self, const PeerInfo& peer) const override;
  const char* reach() const override;
  std::unique_ptr<Connection> createRecv(const ConnectSpec& spec, std::vector<uint8_t>* descriptor) override;
  std::unique_ptr<Connection> connectSend(const ConnectSpec& spec, const std::vector<uint8_t>& descriptor) override;

 private:
  // The proxy (thread and listener) starts with the first connection, so communicators that use no socket
  // connection pay nothing.
  std::shared_ptr<Proxy> proxy();

  std::mutex mu_;
  std::shared_ptr<Proxy> proxy_;
};

}  // namespace chorus::transport::socket
