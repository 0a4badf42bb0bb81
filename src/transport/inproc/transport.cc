#include "transport/inproc/transport.h"

#include <sys/random.h>

#include <mutex>
#include <unordered_map>

#include "base/error.h"
#include "transport/inproc/descriptor.h"
#include "transport/spec.h"

namespace chorus::transport::inproc {
namespace {

struct Registry {
  std::mutex mu;
  std::unordered_map<uint64_t, std::weak_ptr<Channel>> channels;
  uint64_t next = 0;
};

Registry& registry() {
  // Never destroyed: connections may be torn down by threads that outlive static destruction.
  static Registry* r = [] {
    auto* reg = new Registry;
    // Tokens start at a random point so that a descriptor from an earlier run or another process is unlikely
    // to name a live channel even before the pointer check.
    if (getrandom(&reg->next, sizeof(reg->next), 0) != sizeof(reg->next)) reg->next = 1;
    return reg;
  }();
  return *r;
}

}  // namespace

uint64_t registerChannel(const std::shared_ptr<Channel>& channel) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  uint64_t token = ++r.next;
  r.channels[token] = channel;
  return token;
}

std::shared_ptr<Channel> claimChannel(uint64_t token, const Channel* expected) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.channels.find(token);
  if (it == r.channels.end()) return nullptr;
  std::shared_ptr<Channel> ch = it->second.lock();
  if (ch.get() != expected) return nullptr;
  r.channels.erase(it);
  return ch;
}

void withdrawChannel(uint64_t token) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.channels.erase(token);
}

bool InprocTransport::canConnect(const PeerInfo& self, const PeerInfo& peer) const {
  return self.processId == peer.processId;
}

std::unique_ptr<transport::RecvConnection> InprocTransport::createRecv(const ConnectSpec& spec,
                                                                       std::vector<uint8_t>* descriptor) {
  auto channel = std::make_shared<Channel>(spec.nslots, slotBytesFor(spec));
  Descriptor d;
  d.processId = spec.self.processId;
  d.token = registerChannel(channel);
  d.channel = reinterpret_cast<uintptr_t>(channel.get());
  d.encode(descriptor);
  return std::make_unique<RecvConnection>(std::move(channel), d.token, connectionName(spec, false, name()));
}

std::unique_ptr<transport::SendConnection> InprocTransport::connectSend(const ConnectSpec& spec,
                                                                        const std::vector<uint8_t>& descriptor) {
  std::string what = connectionName(spec, true, name());
  Descriptor d = Descriptor::decode(descriptor);
  CHORUS_CHECK_ARG(d.processId == spec.self.processId, what, ": the receiver is in another process (inproc connects ",
                   "threads of one process only; check CHORUS_TRANSPORT)");
  std::shared_ptr<Channel> channel = claimChannel(d.token, reinterpret_cast<const Channel*>(d.channel));
  CHORUS_CHECK_USAGE(channel != nullptr, what,
                     ": no such receiving end (it was destroyed, already connected, or the descriptor is stale)");
  return std::make_unique<SendConnection>(std::move(channel), std::move(what));
}

}  // namespace chorus::transport::inproc
