// The two ends of a shared-memory connection: each process maps the same segment, which holds the FIFO
// (control block with cache-line separated head and tail, then the slots). The receiver creates it, the
// sender maps it and removes its name, so nothing is left in /dev/shm even if both processes are killed.
// Where the receiver may read the sender's memory (cma.h), the sender may post remote refs (fifo.h).
#pragma once

#include <string>

#include "base/shm.h"
#include "transport/fifo.h"

namespace chorus::transport::shm {

class SendConnection : public transport::SendConnection {
 public:
  // remoteRefs: the receiver reads this process's memory (FifoControl::consumerReadsProducer, tested).
  SendConnection(ShmSegment segment, std::string what, PeerCheck check, bool remoteRefs);
  ~SendConnection() override;

 private:
  ShmSegment segment_;
};

class RecvConnection : public transport::RecvConnection {
 public:
  // sender: the producer's process, whose remote refs this end reads.
  RecvConnection(ShmSegment segment, std::string what, PeerCheck check, pid_t sender);
  ~RecvConnection() override;

 private:
  ShmSegment segment_;
};

}  // namespace chorus::transport::shm
