// The Transport interface: one implementation per way of moving bytes between two ranks. A transport builds
// the two ends of a one-way connection (a FIFO of slots, see fifo.h and cuda/device_fifo.h); the receiver's end
// is made first and produces a descriptor that reaches the sender through the bootstrap, which builds its end
// from it. The communicator picks a transport per pair of ranks from an ordered table (table.h): the first
// whose canConnect() accepts the pair, as NCCL's transport loop does.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/wait.h"
#include "transport/connection.h"
#include "transport/fifo.h"
#include "transport/fifo_geometry.h"
#include "transport/peer_info.h"

namespace chorus::transport {

// Everything a transport needs to build one end of one connection.
struct ConnectSpec {
  PeerInfo self;
  PeerInfo peer;
  uint64_t commHash = 0;    // identifies the communicator (for names and logs)
  int lane = 0;             // which of the FIFOs between this pair (coll/conn_key.h: channel lanes, p2p lane)
  int nslots = kFifoSlots;  // FIFO depth (fifo_geometry.h)
  size_t slotBytes = 0;     // bytes per slot (fifo_geometry.h)
  WaitContext ctx;          // deadline and abort flag for building the connection
};

class Transport {
 public:
  virtual ~Transport() = default;
  // "inproc", "shm", "socket", "cuda".
  virtual const char* name() const = 0;
  // The FIFOs this transport builds: host memory (the host executor's) or device memory (the CUDA executor's).
  virtual FifoMemory memory() const { return FifoMemory::kHost; }
  // True when this transport can connect self to peer (same process, same host, any host...). The same answer
  // on both sides of a pair.
  virtual bool canConnect(const PeerInfo& self, const PeerInfo& peer) const = 0;
  // What canConnect requires, for messages: "ranks in one process".
  virtual const char* reach() const = 0;
  // Builds the receiving end; appends to `descriptor` what the sender needs to connect. Host transports
  // return a RecvConnection, device transports a cuda::DeviceConnection.
  virtual std::unique_ptr<Connection> createRecv(const ConnectSpec& spec, std::vector<uint8_t>* descriptor) = 0;
  // Builds the sending end from the receiver's descriptor.
  virtual std::unique_ptr<Connection> connectSend(const ConnectSpec& spec, const std::vector<uint8_t>& descriptor) = 0;
};

// The typed ends of a host-memory transport's connections (for callers that drive one transport directly:
// tests, benchmarks). Throw chorusInternalError when the transport builds device FIFOs.
std::unique_ptr<RecvConnection> createHostRecv(Transport& t, const ConnectSpec& spec, std::vector<uint8_t>* descriptor);
std::unique_ptr<SendConnection> connectHostSend(Transport& t, const ConnectSpec& spec,
                                                const std::vector<uint8_t>& descriptor);

}  // namespace chorus::transport
