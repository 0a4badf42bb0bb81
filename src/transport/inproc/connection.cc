#include "transport/inproc/connection.h"

#include "transport/inproc/transport.h"

namespace chorus::transport::inproc {

// Both ends pass an empty PeerCheck: a thread of this process cannot vanish alone, so the closed flag,
// which the other end sets when it is destroyed, is the only way the far end goes away.
SendConnection::SendConnection(std::shared_ptr<Channel> channel, std::string what)
    : transport::SendConnection(channel->fifo.control(), std::move(what), PeerCheck()), channel_(std::move(channel)) {}

SendConnection::~SendConnection() {
  fifoClose(fifo_);
}

RecvConnection::RecvConnection(std::shared_ptr<Channel> channel, uint64_t token, std::string what)
    : transport::RecvConnection(channel->fifo.control(), std::move(what), PeerCheck()),
      channel_(std::move(channel)),
      token_(token) {}

RecvConnection::~RecvConnection() {
  withdrawChannel(token_);
  fifoClose(fifo_);
}

}  // namespace chorus::transport::inproc
