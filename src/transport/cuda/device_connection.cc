#include "transport/cuda/device_connection.h"

#include "transport/cuda/cuda_util.h"

namespace chorus::transport::cuda {

DeviceConnection::DeviceConnection(Kind kind, std::string what, int device, void* alloc, Hold hold, DevConn fifo)
    : Connection(kind, std::move(what)), device_(device), alloc_(alloc), hold_(hold), fifo_(fifo) {}

DeviceConnection::~DeviceConnection() {
  DeviceScope scope(device_);
  if (hold_ == Hold::kOwned) {
    close();
    deviceFree(alloc_);
  } else if (hold_ == Hold::kIpcMapping) {
    ipcCloseHandle(alloc_);
  }
}

void DeviceConnection::close() {
  deviceMemset(&fifo_.ctrl->closed, 0xff, sizeof(fifo_.ctrl->closed));
}

}  // namespace chorus::transport::cuda
