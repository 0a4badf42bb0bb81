#include "transport/socket/transport.h"

#include <sys/random.h>

#include <algorithm>

#include "base/error.h"
#include "base/params.h"
#include "base/socket.h"
#include "transport/socket/connection.h"
#include "transport/socket/descriptor.h"
#include "transport/socket/proxy.h"
#include "transport/spec.h"

namespace chorus::transport::socket {

SocketTransport::SocketTransport() = default;
SocketTransport::~SocketTransport() = default;

bool SocketTransport::canConnect(const PeerInfo&, const PeerInfo&) const {
  return true;
}

std::shared_ptr<Proxy> SocketTransport::proxy() {
  std::lock_guard<std::mutex> lock(mu_);
  // Listen where the bootstrap listens: the interface CHORUS_SOCKET_IFNAME selects, which peers reach.
  if (!proxy_) proxy_ = std::make_shared<Proxy>(chooseBootstrapInterface().addr);
  return proxy_;
}

const char* SocketTransport::reach() const {
  return "any two ranks";
}

std::unique_ptr<Connection> SocketTransport::createRecv(const ConnectSpec& spec, std::vector<uint8_t>* descriptor) {
  size_t slotBytes = spec.slotBytes;
  int64_t nstreams = param::SocketNstreams();
  CHORUS_CHECK_ARG(nstreams >= 1 && nstreams <= kMaxStreams, "CHORUS_SOCKET_NSTREAMS=", nstreams, " is outside [1, ",
                   kMaxStreams, "]");
  auto state = std::make_shared<ConnState>(false, spec.nslots, slotBytes, static_cast<uint32_t>(nstreams),
                                           connectionName(spec, false, name()));
  // The token is the receiver's secret for this connection: only the sender it was given to can attach.
  CHORUS_CHECK_SYS(getrandom(state->token, kTokenBytes, 0) == static_cast<ssize_t>(kTokenBytes) ? 0 : -1,
                   "reading random bytes for a connection token");
  std::shared_ptr<Proxy> p = proxy();
  Descriptor d;
  d.address = p->address().toString();
  std::copy(state->token, state->token + kTokenBytes, d.token);
  d.nstreams = static_cast<uint32_t>(nstreams);
  d.nslots = static_cast<uint32_t>(spec.nslots);
  d.slotBytes = slotBytes;
  d.encode(descriptor);
  p->add(state);
  return std::make_unique<RecvConnection>(std::move(p), std::move(state));
}

std::unique_ptr<Connection> SocketTransport::connectSend(const ConnectSpec& spec,
                                                         const std::vector<uint8_t>& descriptor) {
  Descriptor d = Descriptor::decode(descriptor);
  auto state = std::make_shared<ConnState>(true, static_cast<int>(d.nslots), d.slotBytes, d.nstreams,
                                           connectionName(spec, true, name()));
  WaitContext ctx = spec.ctx;
  ctx.what = state->what;
  SocketAddress addr = SocketAddress::parse(d.address, -1, "socket connection descriptor address");
  for (uint32_t s = 0; s < d.nstreams; ++s) {
    // The receiver's proxy listened before it posted the descriptor: a refusal means its process is gone.
    Socket sock = Socket::connect(addr, ctx, /*refusedIsFinal=*/true);  // sets TCP_NODELAY
    Hello hello{};
    hello.magic = kHelloMagic;
    hello.stream = s;
    std::copy(d.token, d.token + kTokenBytes, hello.token);
    sock.sendAll(&hello, sizeof(hello), ctx);
    sock.setNonBlocking(true);
    state->streams[s].sock = std::move(sock);
    state->streams[s].peer = addr.toString();
  }
  std::shared_ptr<Proxy> p = proxy();
  p->add(state);
  return std::make_unique<SendConnection>(std::move(p), std::move(state));
}

}  // namespace chorus::transport::socket
