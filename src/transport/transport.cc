#include "transport/transport.h"

#include "base/error.h"

namespace chorus::transport {

std::unique_ptr<RecvConnection> createHostRecv(Transport& t, const ConnectSpec& spec,
                                               std::vector<uint8_t>* descriptor) {
  CHORUS_ENFORCE(t.memory() == FifoMemory::kHost, t.name(), " builds device FIFOs");
  return std::unique_ptr<RecvConnection>(static_cast<RecvConnection*>(t.createRecv(spec, descriptor).release()));
}

std::unique_ptr<SendConnection> connectHostSend(Transport& t, const ConnectSpec& spec,
                                                const std::vector<uint8_t>& descriptor) {
  CHORUS_ENFORCE(t.memory() == FifoMemory::kHost, t.name(), " builds device FIFOs");
  return std::unique_ptr<SendConnection>(static_cast<SendConnection*>(t.connectSend(spec, descriptor).release()));
}

}  // namespace chorus::transport
