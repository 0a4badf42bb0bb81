// The network transport: connections between ranks on different hosts (or anywhere, with
// CHORUS_TRANSPORT=socket) through the network plugin CHORUS_NET / CHORUS_NET_PLUGIN select (net.h, plugin.h).
// Both ends keep a FIFO in local memory, registered with the plugin; this transport's proxy (proxy.h) turns every
// posted slot into one isend and every free slot into one irecv, and publishes a slot when its request
// completes, as NCCL's net transport proxy does: on the user's thread for small messages, on its own thread
// for large ones. The table knows it as "socket" whatever the
// plugin (CHORUS_TRANSPORT=socket keeps its meaning: every pair over the network); connections name the plugin.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "transport/net/net.h"
#include "transport/transport.h"

namespace chorus::transport::net {

class Proxy;

class NetTransport : public Transport {
 public:
  NetTransport();
  ~NetTransport() override;

  const char* name() const override { return "socket"; }
  bool canConnect(const PeerInfo& self, const PeerInfo& peer) const override;
  const char* reach() const override;
  std::unique_ptr<Connection> createRecv(const ConnectSpec& spec, std::vector<uint8_t>* descriptor) override;
  std::unique_ptr<Connection> connectSend(const ConnectSpec& spec, const std::vector<uint8_t>& descriptor) override;

 private:
  // The plugin is loaded and the proxy thread started with the first connection, so communicators that use
  // no network connection pay nothing (and a plugin that cannot run here fails only those that need it).
  std::shared_ptr<Proxy> proxy();

  std::mutex mu_;
  std::shared_ptr<Proxy> proxy_;
};

}  // namespace chorus::transport::net
