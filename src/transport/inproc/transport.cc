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
  std::unordered_map<uint64_t, std::weak_ptr<SharedFifo>> fifos;
  uint64_t next = 0;
};

Registry& registry() {
  // Never destroyed: connections may be torn down by threads that outlive static destruction.
  static Registry* r = [] {
    auto* reg = new Registry;
    // Tokens start at a random point so that a descriptor from an earlier run or another process is unlikely
    // to name a live FIFO even before the pointer check.
    if (getrandom(&reg->next, sizeof(reg->next), 0) != sizeof(reg->next)) reg->next = 1;
    return reg;
  }();
  return *r;
}

}  // namespace

uint64_t registerFifo(const std::shared_ptr<SharedFifo>& fifo) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  uint64_t token = ++r.next;
  r.fifos[token] = fifo;
  return token;
}

std::shared_ptr<SharedFifo> claimFifo(uint64_t token, const SharedFifo* expected) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.fifos.find(token);
  if (it == r.fifos.end()) return nullptr;
  std::shared_ptr<SharedFifo> ch = it->second.lock();
  if (ch.get() != expected) return nullptr;
  r.fifos.erase(it);
  return ch;
}

void withdrawFifo(uint64_t token) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.fifos.erase(token);
}

bool InprocTransport::canConnect(const PeerInfo& self, const PeerInfo& peer) const {
  return self.processId == peer.processId;
}

const char* InprocTransport::reach() const {
  return "ranks in one process";
}

std::unique_ptr<Connection> InprocTransport::createRecv(const ConnectSpec& spec, std::vector<uint8_t>* descriptor) {
  auto shared = std::make_shared<SharedFifo>(spec.nslots, spec.slotBytes);
  Descriptor d;
  d.processId = spec.self.processId;
  d.token = registerFifo(shared);
  d.fifo = reinterpret_cast<uintptr_t>(shared.get());
  d.encode(descriptor);
  return std::make_unique<RecvConnection>(std::move(shared), d.token, connectionName(spec, false, name()));
}

std::unique_ptr<Connection> InprocTransport::connectSend(const ConnectSpec& spec,
                                                         const std::vector<uint8_t>& descriptor) {
  std::string what = connectionName(spec, true, name());
  Descriptor d = Descriptor::decode(descriptor);
  CHORUS_CHECK_ARG(d.processId == spec.self.processId, what, ": the receiver is in another process (inproc connects ",
                   "threads of one process only; check CHORUS_TRANSPORT)");
  std::shared_ptr<SharedFifo> shared = claimFifo(d.token, reinterpret_cast<const SharedFifo*>(d.fifo));
  CHORUS_CHECK_USAGE(shared != nullptr, what,
                     ": no such receiving end (it was destroyed, already connected, or the descriptor is stale)");
  return std::make_unique<SendConnection>(std::move(shared), std::move(what));
}

}  // namespace chorus::transport::inproc
