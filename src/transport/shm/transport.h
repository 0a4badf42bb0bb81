// The shared-memory transport: ranks on one host in different processes share a FIFO in a POSIX shared
// memory segment. A peer that dies is noticed by watching its process (pidfd), every few milliseconds
// while a wait lasts. Where the receiver may read the sender's memory (cma.h: probed by the receiver, tested by
// the sender, CHORUS_CMA_DISABLE), the sender may publish remote refs instead of copies (fifo.h).
#pragma once

#include <memory>
#include <vector>

#include "transport/transport.h"

namespace chorus::transport::shm {

class ShmTransport : public Transport {
 public:
  const char* name() const override { return "shm"; }
  bool canConnect(const PeerInfo& self, const PeerInfo& peer) const override;
  const char* reach() const override;
  std::unique_ptr<Connection> createRecv(const ConnectSpec& spec, std::vector<uint8_t>* descriptor) override;
  std::unique_ptr<Connection> connectSend(const ConnectSpec& spec, const std::vector<uint8_t>& descriptor) override;
};

}  // namespace chorus::transport::shm
