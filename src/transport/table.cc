#include "transport/table.h"

#include "base/error.h"
#include "base/params.h"
#include "chorus_build_config.h"
#include "transport/cuda/transport.h"
#include "transport/inproc/transport.h"
#include "transport/net/transport.h"
#include "transport/shm/transport.h"

namespace chorus::transport {

namespace {

const char* memoryName(FifoMemory m) {
  return m == FifoMemory::kHost ? "host" : "device";
}

}  // namespace

TransportTable::TransportTable() : TransportTable(param::Transport()) {}

TransportTable::TransportTable(const std::string& forced) : forced_(forced) {
  transports_.push_back(std::make_unique<inproc::InprocTransport>());
  transports_.push_back(std::make_unique<shm::ShmTransport>());
#if CHORUS_BUILD_CUDA
  transports_.push_back(std::make_unique<cuda::CudaTransport>());
#endif
  transports_.push_back(std::make_unique<net::NetTransport>());
  if (forced_.empty()) return;
  std::vector<std::string> names;
  for (const auto& t : transports_) {
    if (t->memory() == FifoMemory::kHost) names.push_back(t->name());
  }
  bool known = false;
  std::string list;  // "inproc, shm or socket"
  for (size_t i = 0; i < names.size(); ++i) {
    known |= forced_ == names[i];
    list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  }
  CHORUS_CHECK_ARG(known, "CHORUS_TRANSPORT='", forced_, "' is not a transport (use ", list, ", or leave it unset)");
}

TransportTable::~TransportTable() = default;

void TransportTable::add(std::unique_ptr<Transport> t, const char* before) {
  auto at = transports_.end();
  for (auto it = transports_.begin(); before != nullptr && it != transports_.end(); ++it) {
    if (std::string((*it)->name()) == before) {
      at = it;
      break;
    }
  }
  transports_.insert(at, std::move(t));
}

Transport& TransportTable::select(const PeerInfo& self, const PeerInfo& peer, FifoMemory memory) const {
  const bool forced = !forced_.empty() && memory == FifoMemory::kHost;
  for (const auto& t : transports_) {
    if (t->memory() != memory || (forced && forced_ != t->name())) continue;
    if (t->canConnect(self, peer)) return *t;
    CHORUS_CHECK_ARG(!forced, "CHORUS_TRANSPORT=", forced_, " cannot connect rank ", self.rank, " and rank ", peer.rank,
                     " (", self.processId != peer.processId ? "different processes" : "",
                     self.processId != peer.processId && self.hostHash != peer.hostHash ? ", " : "",
                     self.hostHash != peer.hostHash ? "different hosts" : "", ")");
  }
  std::string reaches;
  for (const auto& t : transports_) {
    if (t->memory() == memory) reaches += detail::concat(reaches.empty() ? "" : "; ", t->name(), ": ", t->reach());
  }
  CHORUS_THROW(Status::kInvalidUsage, "no transport with ", memoryName(memory), " FIFOs connects rank ", self.rank,
               " (", self.hostname, ", device ", self.device, ") and rank ", peer.rank, " (", peer.hostname,
               ", device ", peer.device, "): ", reaches.empty() ? "this build has none" : reaches);
}

}  // namespace chorus::transport
