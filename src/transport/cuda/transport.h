// The CUDA transport: device FIFOs (device_fifo.h) between CUDA ranks of one host, for the CUDA executor. The
// receiver allocates the FIFO in its GPU's memory; the sender writes into it directly (same process: the pointer,
// with peer access between two devices) or through CUDA IPC (another process). Ranks on other hosts would need a
// host proxy that forwards slots (DevFifoKind::kHostStaged): not implemented yet (docs/cuda.md).
#pragma once

#include <memory>
#include <vector>

#include "transport/transport.h"

namespace chorus::transport::cuda {

class CudaTransport : public Transport {
 public:
  const char* name() const override { return "cuda"; }
  FifoMemory memory() const override { return FifoMemory::kDevice; }
  bool canConnect(const PeerInfo& self, const PeerInfo& peer) const override;
  const char* reach() const override;
  std::unique_ptr<Connection> createRecv(const ConnectSpec& spec, std::vector<uint8_t>* descriptor) override;
  std::unique_ptr<Connection> connectSend(const ConnectSpec& spec, const std::vector<uint8_t>& descriptor) override;
};

}  // namespace chorus::transport::cuda
