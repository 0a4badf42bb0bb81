// The two ends of an in-process connection share one FIFO in ordinary memory. The SharedFifo that holds it is
// reference counted: whichever end is destroyed last frees it, and the first one to go marks it closed so
// that the other end's waits fail instead of hanging.
#pragma once

#include <memory>
#include <string>

#include "transport/fifo.h"
#include "transport/host_fifo.h"

namespace chorus::transport::inproc {

struct SharedFifo {
  SharedFifo(int nslots, size_t slotBytes) : fifo(nslots, slotBytes) {}
  HostFifo fifo;
};

class SendConnection : public transport::SendConnection {
 public:
  SendConnection(std::shared_ptr<SharedFifo> shared, std::string what);
  ~SendConnection() override;

 private:
  std::shared_ptr<SharedFifo> shared_;
};

class RecvConnection : public transport::RecvConnection {
 public:
  // `token` is the FIFO's registry key, withdrawn when this end goes away before a sender connected.
  RecvConnection(std::shared_ptr<SharedFifo> shared, uint64_t token, std::string what);
  ~RecvConnection() override;

 private:
  std::shared_ptr<SharedFifo> shared_;
  uint64_t token_;
};

}  // namespace chorus::transport::inproc
