// One end of a CUDA transport connection: a device FIFO (device_fifo.h) that kernels read and write. The
// receiver's end owns the FIFO's memory (device memory of its GPU); the sender's end reaches it through a
// pointer (same process: the same device, or a peer device with peer access) or a CUDA IPC mapping (another
// process on the host).
#pragma once

#include <string>

#include "transport/connection.h"
#include "transport/cuda/device_fifo.h"

namespace chorus::transport::cuda {

class DeviceConnection : public Connection {
 public:
  // How this end holds the FIFO's memory.
  enum class Hold { kOwned, kPeerPointer, kIpcMapping };

  DeviceConnection(Kind kind, std::string what, int device, void* alloc, Hold hold, DevConn fifo);
  // The receiver marks the FIFO closed (a sender still attached in another process stops with kDevPeerClosed)
  // and frees it; an IPC mapping is closed. The communicator destroys its device connections only after its
  // kernels have finished (core/device_comm.h).
  ~DeviceConnection() override;

  // The FIFO as kernels see it (plain data for kernel arguments).
  const DevConn& fifo() const { return fifo_; }
  // Writes the FIFO's closed word.
  void close() override;

 private:
  int device_;
  void* alloc_;
  Hold hold_;
  DevConn fifo_;
};

}  // namespace chorus::transport::cuda
