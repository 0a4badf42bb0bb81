// One end of a one-way connection, as the transport that built it (transport.h) hands it to the communicator.
// The executors use the typed ends: host FIFO ends (fifo.h: SendConnection, RecvConnection), read and written
// by the CPU, and device FIFO ends (cuda/device_connection.h), read and written by kernels.
#pragma once

#include <string>

#include "base/wait.h"

namespace chorus::transport {

// Which executor reads and writes a connection's FIFO. Every transport builds one kind (Transport::memory()).
enum class FifoMemory { kHost, kDevice };

class Connection {
 public:
  enum class Kind { kHostSend, kHostRecv, kDeviceSend, kDeviceRecv };

  virtual ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  Kind kind() const { return kind_; }
  bool sends() const { return kind_ == Kind::kHostSend || kind_ == Kind::kDeviceSend; }
  FifoMemory memory() const {
    return kind_ == Kind::kHostSend || kind_ == Kind::kHostRecv ? FifoMemory::kHost : FifoMemory::kDevice;
  }
  // "rank 1 -> rank 2 lane 0 over shm": names the connection in messages and logs.
  const std::string& what() const { return what_; }

  // After a failure on this rank: marks the FIFO closed, so that the far end's waits end at once
  // (chorusRemoteError) instead of at their deadline.
  virtual void close() = 0;
  // Send ends: waits until the far end has taken every posted slot (the communicator drains before it frees
  // its connections, so that nothing a peer still expects is lost). Other ends return at once.
  virtual void drain(const WaitContext& ctx);

 protected:
  Connection(Kind kind, std::string what) : what_(std::move(what)), kind_(kind) {}
  std::string what_;

 private:
  Kind kind_;
};

}  // namespace chorus::transport
