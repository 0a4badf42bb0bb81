#include "transport/select.h"

#include "base/error.h"
#include "base/params.h"
#include "transport/inproc/transport.h"
#include "transport/shm/transport.h"
#include "transport/socket/transport.h"

namespace chorus::transport {
namespace {

enum Index { kInproc = 0, kShm = 1, kSocket = 2 };

}  // namespace

TransportSet::TransportSet() : TransportSet(param::Transport()) {}

TransportSet::TransportSet(const std::string& forced) : forced_(forced) {
  CHORUS_CHECK_ARG(forced.empty() || forced == "inproc" || forced == "shm" || forced == "socket", "CHORUS_TRANSPORT='",
                   forced, "' is not a transport (use inproc, shm or socket, or leave it unset)");
  transports_.push_back(std::make_unique<inproc::InprocTransport>());
  transports_.push_back(std::make_unique<shm::ShmTransport>());
  transports_.push_back(std::make_unique<socket::SocketTransport>());
}

TransportSet::~TransportSet() = default;

Transport* TransportSet::choose(const PeerInfo& self, const PeerInfo& peer) const {
  if (!forced_.empty()) {
    for (const auto& t : transports_) {
      if (forced_ != t->name()) continue;
      CHORUS_CHECK_ARG(t->canConnect(self, peer), "CHORUS_TRANSPORT=", forced_, " cannot connect rank ", self.rank,
                       " and rank ", peer.rank, " (", self.processId != peer.processId ? "different processes" : "",
                       self.processId != peer.processId && self.hostHash != peer.hostHash ? ", " : "",
                       self.hostHash != peer.hostHash ? "different hosts" : "", ")");
      return t.get();
    }
  }
  if (self.processId == peer.processId) return transports_[kInproc].get();
  if (self.hostHash == peer.hostHash) return transports_[kShm].get();
  return transports_[kSocket].get();
}

Transport& TransportSet::select(const PeerInfo& self, const PeerInfo& peer) {
  return *choose(self, peer);
}

const char* TransportSet::nameFor(const PeerInfo& self, const PeerInfo& peer) const {
  return choose(self, peer)->name();
}

void TransportSet::setPeers(int selfRank, std::vector<PeerInfo> peers) {
  CHORUS_CHECK_ARG(selfRank >= 0 && static_cast<size_t>(selfRank) < peers.size(), "rank ", selfRank,
                   " is not among the ", peers.size(), " peers");
  selfRank_ = selfRank;
  peers_ = std::move(peers);
}

const PeerInfo& TransportSet::peerInfo(int rank) const {
  CHORUS_CHECK_USAGE(selfRank_ >= 0, "TransportSet::setPeers was not called");
  CHORUS_CHECK_ARG(rank >= 0 && static_cast<size_t>(rank) < peers_.size(), "peer rank ", rank, " is outside [0, ",
                   peers_.size(), ")");
  return peers_[static_cast<size_t>(rank)];
}

Transport& TransportSet::forRank(int rank) {
  return select(peerInfo(selfRank_), peerInfo(rank));
}

const char* TransportSet::nameForRank(int rank) const {
  return nameFor(peerInfo(selfRank_), peerInfo(rank));
}

std::unique_ptr<RecvConnection> TransportSet::createRecv(const ConnectSpec& spec, std::vector<uint8_t>* descriptor) {
  return select(spec.self, spec.peer).createRecv(spec, descriptor);
}

std::unique_ptr<SendConnection> TransportSet::connectSend(const ConnectSpec& spec,
                                                          const std::vector<uint8_t>& descriptor) {
  return select(spec.self, spec.peer).connectSend(spec, descriptor);
}

}  // namespace chorus::transport
