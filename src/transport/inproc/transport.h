// The in-process transport: ranks that are threads of one process share a FIFO by pointer.
#pragma once

#include <memory>
#include <vector>

#include "transport/inproc/connection.h"
#include "transport/transport.h"

namespace chorus::transport::inproc {

// FIFOs created by receivers and not yet claimed by their senders, keyed by token (process-wide: the
// two ranks of a pair belong to different communicator objects, hence different Transport instances).
std::shared_ptr<SharedFifo> claimFifo(uint64_t token, const SharedFifo* expected);
uint64_t registerFifo(const std::shared_ptr<SharedFifo>& fifo);
void withdrawFifo(uint64_t token);

class InprocTransport : public Transport {
 public:
  const char* name() const override { return "inproc"; }
  bool canConnect(const PeerInfo& self, const PeerInfo& peer) const override;
  const char* reach() const override;
  std::unique_ptr<Connection> createRecv(const ConnectSpec& spec, std::vector<uint8_t>* descriptor) override;
  std::unique_ptr<Connection> connectSend(const ConnectSpec& spec, const std::vector<uint8_t>& descriptor) override;
};

}  // namespace chorus::transport::inproc
