// The two ends of a shared-memory connection: each process maps the same segment, which holds the FIFO
// (control block with cache-line separated head and tail, then the slots). The receiver creates it, the
// sender maps it and removes its name, so nothing is left in /dev/shm even if both processes are killed.
#pragma once

#include <string>

#include "base/shm.h"
#include "transport/fifo.h"

namespace chorus::transport::shm {

class SendConnection : public transport::SendConnection {
 public:
  SendConnection(ShmSegment segment, std::string what, PeerCheck check);
  ~SendConnection() override;

 private:
  ShmSegment segment_;
};

class RecvConnection : public transport::RecvConnection {
 public:
  RecvConnection(ShmSegment segment, std::string what, PeerCheck check);
  ~RecvConnection() override;

 private:
  ShmSegment segment_;
};

}  // namespace chorus::transport::shm
