// The Transport interface: one implementation per way of moving bytes between two ranks. A transport builds
// the two ends of a one-way connection (a FIFO of slots, see fifo.h); the receiver's end is made first and
// produces a descriptor that reaches the sender through the bootstrap, which builds its end from it. The
// communicator chooses a transport per pair of ranks (select.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/wait.h"
#include "transport/fifo.h"
#include "transport/peer_info.h"

namespace chorus::transport {

// Everything a transport needs to build one end of one connection.
struct ConnectSpec {
  PeerInfo self;
  PeerInfo peer;
  uint64_t commHash = 0;  // identifies the communicator (for names and logs)
  int channel = 0;        // which parallel ring/tree this connection belongs to
  uint32_t tag = 0;       // distinguishes several connections between the same pair (ring, tree, p2p)
  int nslots = 8;         // FIFO depth
  size_t slotBytes = 0;   // bytes per slot
  WaitContext ctx;        // deadline and abort flag for building the connection
};

class Transport {
 public:
  virtual ~Transport() = default;
  // "inproc", "shm" or "socket".
  virtual const char* name() const = 0;
  // True when this transport can connect self to peer (same process, same host, any host...).
  virtual bool canConnect(const PeerInfo& self, const PeerInfo& peer) const = 0;
  // Builds the receiving end; appends to `descriptor` what the sender needs to connect.
  virtual std::unique_ptr<RecvConnection> createRecv(const ConnectSpec& spec, std::vector<uint8_t>* descriptor) = 0;
  // Builds the sending end from the receiver's descriptor.
  virtual std::unique_ptr<SendConnection> connectSend(const ConnectSpec& spec,
                                                      const std::vector<uint8_t>& descriptor) = 0;
};

}  // namespace chorus::transport
