#include "transport/shm/connection.h"

#include <utility>

namespace chorus::transport::shm {

// fifoClose runs in the destructor bodies, before the segment member unmaps the memory: the far end learns
// that this end went away from the closed flag, which lives in the shared segment.
SendConnection::SendConnection(ShmSegment segment, std::string what, PeerCheck check, bool remoteRefs)
    : transport::SendConnection(static_cast<FifoControl*>(segment.data()), std::move(what), std::move(check)),
      segment_(std::move(segment)) {
  if (remoteRefs) enableRemoteRefs();
}

SendConnection::~SendConnection() {
  fifoClose(fifo_);
}

RecvConnection::RecvConnection(ShmSegment segment, std::string what, PeerCheck check, pid_t sender)
    : transport::RecvConnection(static_cast<FifoControl*>(segment.data()), std::move(what), std::move(check)),
      segment_(std::move(segment)) {
  setRemotePid(sender);
}

RecvConnection::~RecvConnection() {
  fifoClose(fifo_);
}

}  // namespace chorus::transport::shm
