// The in-process transport: ranks that are threads of one process share a FIFO by pointer.
#pragma once

#include <memory>
#include <vector>

#include "transport/inproc/connection.h"
#include "transport/transport.h"

namespace chorus::transport::inproc {

// Channels created by receivers and not yet claimed by their senders, keyed by token (process-wide: the
// two ranks of a pair belong to different communicator objects, hence different Transport instances).
std::shared_ptr<Channel> claimChannel(uint64_t token, const Channel* expected);
uint64_t registerChannel(const std::shared_ptr<Channel>& channel);
void withdrawChannel(uint64_t token);

class InprocTransport : public Transport {
 public:
  const char* name() const override { return "inproc"; }
  bool canConnect(const PeerInfo& self, const PeerInfo& peer) const override;
  std::unique_ptr<transport::RecvConnection> createRecv(const ConnectSpec& spec,
                                                        std::vector<uint8_t>* descriptor) override;
  std::unique_ptr<transport::SendConnection> connectSend(const ConnectSpec& spec,
                                                         const std::vector<uint8_t>& descriptor) override;
};

}  // namespace chorus::transport::inproc
