#include "transport/inproc/connection.h"

#include "transport/inproc/transport.h"

namespace chorus::transport::inproc {

// Both ends pass an empty PeerCheck: a thread of this process cannot vanish alone, so the closed flag,
// which the other end sets when it is destroyed, is the only way the far end goes away.
SendConnection::SendConnection(std::shared_ptr<SharedFifo> shared, std::string what)
    : transport::SendConnection(shared->fifo.control(), std::move(what), PeerCheck()), shared_(std::move(shared)) {}

SendConnection::~SendConnection() {
  fifoClose(fifo_);
}

RecvConnection::RecvConnection(std::shared_ptr<SharedFifo> shared, uint64_t token, std::string what)
    : transport::RecvConnection(shared->fifo.control(), std::move(what), PeerCheck()),
      shared_(std::move(shared)),
      token_(token) {}

RecvConnection::~RecvConnection() {
  withdrawFifo(token_);
  fifoClose(fifo_);
}

}  // namespace chorus::transport::inproc
