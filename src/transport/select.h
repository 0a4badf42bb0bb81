// Choosing a transport per pair of ranks. A communicator owns one TransportSet, which owns one instance of
// every transport (the socket transport's proxy thread is therefore per communicator). The choice:
//   same process (PeerInfo::processId)  -> inproc
//   same host (PeerInfo::hostHash)      -> shm
//   otherwise                           -> socket
// CHORUS_TRANSPORT=inproc|shm|socket forces one transport for every pair; a pair it cannot connect is an
// error that names the variable.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "transport/transport.h"

namespace chorus::transport {

class TransportSet {
 public:
  // Reads CHORUS_TRANSPORT. Throws chorusInvalidArgument naming the variable and the value when it is set to
  // anything but inproc, shm or socket.
  TransportSet();
  // As above with an explicit value instead of the environment ("" chooses per pair).
  explicit TransportSet(const std::string& forced);
  ~TransportSet();
  TransportSet(const TransportSet&) = delete;
  TransportSet& operator=(const TransportSet&) = delete;

  // The transport for the connection between self and peer (the same answer on both sides of a pair).
  Transport& select(const PeerInfo& self, const PeerInfo& peer);
  const char* nameFor(const PeerInfo& self, const PeerInfo& peer) const;

  // Per-rank form, once the communicator knows every rank's PeerInfo (peers[r] is rank r; self is a rank).
  void setPeers(int selfRank, std::vector<PeerInfo> peers);
  Transport& forRank(int rank);
  // "inproc", "shm" or "socket": what connections to `rank` use (for logs and demos).
  const char* nameForRank(int rank) const;

  // Builds the receiving / sending end of a connection with the transport select() picks for the spec.
  std::unique_ptr<RecvConnection> createRecv(const ConnectSpec& spec, std::vector<uint8_t>* descriptor);
  std::unique_ptr<SendConnection> connectSend(const ConnectSpec& spec, const std::vector<uint8_t>& descriptor);

  // The forced transport's name, or "" when choosing per pair.
  const std::string& forced() const { return forced_; }

 private:
  Transport* choose(const PeerInfo& self, const PeerInfo& peer) const;
  const PeerInfo& peerInfo(int rank) const;

  std::string forced_;
  std::vector<std::unique_ptr<Transport>> transports_;  // inproc, shm, socket
  int selfRank_ = -1;
  std::vector<PeerInfo> peers_;
};

}  // namespace chorus::transport
