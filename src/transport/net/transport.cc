#include "transport/net/transport.h"

#include <cstring>
#include <thread>

#include "base/error.h"
#include "base/wait.h"
#include "transport/descriptor.h"
#include "transport/fifo.h"
#include "transport/net/connection.h"
#include "transport/net/plugin.h"
#include "transport/net/proxy.h"
#include "transport/spec.h"

namespace chorus::transport::net {
namespace {

constexpr uint32_t kMagic = 0x43484e54;  // "CHNT"

// What a receiver tells its sender: the plugin it listens with, its handle, and the FIFO geometry.
struct Descriptor {
  std::string plugin;
  uint8_t handle[CHORUS_NET_HANDLE_MAXSIZE] = {};
  uint32_t nslots = 0;
  uint64_t slotBytes = 0;

  void encode(std::vector<uint8_t>* out) const {
    DescriptorWriter w(out);
    w.put(kMagic);
    w.putString(plugin);
    w.putBytes(handle, sizeof(handle));
    w.put(nslots);
    w.put(slotBytes);
  }
  static Descriptor decode(const std::vector<uint8_t>& in) {
    DescriptorReader r(in, "socket");
    r.expectMagic(kMagic);
    Descriptor d;
    d.plugin = r.getString();
    r.getBytes(d.handle, sizeof(d.handle));
    d.nslots = r.get<uint32_t>();
    d.slotBytes = r.get<uint64_t>();
    r.expectEnd();
    CHORUS_CHECK_ARG(d.nslots >= 1 && d.nslots <= static_cast<uint32_t>(kMaxSlots) && d.slotBytes > 0,
                     "malformed network connection descriptor");
    return d;
  }
};

}  // namespace

NetTransport::NetTransport() = default;
NetTransport::~NetTransport() = default;

bool NetTransport::canConnect(const PeerInfo&, const PeerInfo&) const {
  return true;
}

const char* NetTransport::reach() const {
  return "any two ranks";
}

std::shared_ptr<Proxy> NetTransport::proxy() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!proxy_) proxy_ = std::make_shared<Proxy>(selectedPlugin());
  return proxy_;
}

std::unique_ptr<Connection> NetTransport::createRecv(const ConnectSpec& spec, std::vector<uint8_t>* descriptor) {
  std::shared_ptr<Proxy> p = proxy();
  const chorusNet_v1_t* plugin = p->plugin();
  auto state =
      std::make_shared<NetConn>(plugin, false, spec.nslots, spec.slotBytes, connectionName(spec, false, plugin->name));
  Descriptor d;
  d.plugin = plugin->name;
  chorusNetResult_t r = plugin->listen(0, d.handle, &state->listenComm);
  if (r != chorusNetSuccess) CHORUS_THROW(Status::kSystemError, state->what, ": listen: ", pluginError(plugin, r));
  d.nslots = static_cast<uint32_t>(spec.nslots);
  d.slotBytes = spec.slotBytes;
  d.encode(descriptor);
  p->add(state);
  return std::make_unique<RecvConnection>(std::move(p), std::move(state));
}

std::unique_ptr<Connection> NetTransport::connectSend(const ConnectSpec& spec, const std::vector<uint8_t>& descriptor) {
  Descriptor d = Descriptor::decode(descriptor);
  std::shared_ptr<Proxy> p = proxy();
  const chorusNet_v1_t* plugin = p->plugin();
  CHORUS_CHECK_ARG(d.plugin == plugin->name, "rank ", spec.peer.rank, " listens with the network plugin ", d.plugin,
                   " and rank ", spec.self.rank, " uses ", plugin->name, ": set CHORUS_NET alike on every host");
  auto state = std::make_shared<NetConn>(plugin, true, static_cast<int>(d.nslots), d.slotBytes,
                                         connectionName(spec, true, plugin->name));
  WaitContext ctx = spec.ctx;
  ctx.what = state->what + ": connecting";
  // connect() is non-blocking: poll it under the deadline (it completes once the peer's accept runs).
  Waiter w(ctx);
  for (;;) {
    chorusNetResult_t r = plugin->connect(0, d.handle, &state->comm);
    if (r != chorusNetSuccess) CHORUS_THROW(Status::kRemoteError, state->what, ": connect: ", pluginError(plugin, r));
    if (state->comm != nullptr) break;
    w.pause();
  }
  FifoControl* f = state->fifo.control();
  chorusNetResult_t r =
      plugin->regMr(state->comm, fifoSlot(f, 0), f->nslots * f->slotStride, CHORUS_PTR_HOST, &state->mr);
  if (r != chorusNetSuccess) CHORUS_THROW(Status::kSystemError, state->what, ": regMr: ", pluginError(plugin, r));
  p->add(state);
  return std::make_unique<SendConnection>(std::move(p), std::move(state));
}

}  // namespace chorus::transport::net
