#include "transport/cuda/transport.h"

#include "base/error.h"
#include "transport/cuda/cuda_descriptor.h"
#include "transport/cuda/cuda_util.h"
#include "transport/cuda/device_connection.h"
#include "transport/spec.h"

namespace chorus::transport::cuda {

bool CudaTransport::canConnect(const PeerInfo& self, const PeerInfo& peer) const {
  return self.device >= 0 && peer.device >= 0 && self.hostHash == peer.hostHash;
}

const char* CudaTransport::reach() const {
  return "CUDA ranks on one host (CUDA communicators across hosts, or with host ranks, are not implemented yet: "
         "docs/cuda.md)";
}

std::unique_ptr<Connection> CudaTransport::createRecv(const ConnectSpec& spec, std::vector<uint8_t>* descriptor) {
  const int device = spec.self.device;
  CHORUS_ENFORCE(spec.nslots == static_cast<int>(kDevFifoSlots), "device FIFOs have ", kDevFifoSlots, " slots");
  DeviceScope scope(device);
  void* alloc = deviceAlloc(devFifoBytes(spec.slotBytes));
  DevConn fifo;
  fifo.ctrl = static_cast<DevFifoControl*>(alloc);
  fifo.slots = static_cast<char*>(alloc) + devFifoSlotsOffset();
  fifo.slotBytes = spec.slotBytes;
  // Owned from here: a failure below frees the memory with the connection.
  auto end = std::make_unique<DeviceConnection>(Connection::Kind::kDeviceRecv, connectionName(spec, false, name()),
                                                device, alloc, DeviceConnection::Hold::kOwned, fifo);
  DevFifoDescriptor d;
  d.device = device;
  d.processId = spec.self.processId;
  d.slotBytes = spec.slotBytes;
  d.nslots = kDevFifoSlots;
  if (spec.peer.processId == spec.self.processId) {
    d.kind = DevFifoKind::kDirect;
    d.pointer = reinterpret_cast<uint64_t>(alloc);
  } else {
    d.kind = DevFifoKind::kIpc;
    ipcGetHandle(alloc, d.ipcHandle);
  }
  *descriptor = serialize(d);
  return end;
}

std::unique_ptr<Connection> CudaTransport::connectSend(const ConnectSpec& spec,
                                                       const std::vector<uint8_t>& descriptor) {
  const int device = spec.self.device;
  DeviceScope scope(device);
  const DevFifoDescriptor d = parseDevFifoDescriptor(descriptor);
  void* alloc = nullptr;
  DeviceConnection::Hold hold = DeviceConnection::Hold::kPeerPointer;
  if (d.kind == DevFifoKind::kDirect) {
    CHORUS_ENFORCE(d.processId == spec.self.processId, "direct device FIFO from another process");
    if (d.device != device) {
      CHORUS_CHECK_USAGE(enablePeerAccess(device, d.device), "CUDA devices ", device, " and ", d.device,
                         " cannot access each other's memory (no peer access): not supported yet");
    }
    alloc = reinterpret_cast<void*>(d.pointer);
  } else if (d.kind == DevFifoKind::kIpc) {
    alloc = ipcOpenHandle(d.ipcHandle);
    hold = DeviceConnection::Hold::kIpcMapping;
  } else {
    CHORUS_THROW(Status::kInvalidUsage, "host-staged device FIFOs (peers on other hosts) are not implemented yet");
  }
  char* base = static_cast<char*>(alloc) + d.ipcOffset;
  DevConn fifo;
  fifo.ctrl = reinterpret_cast<DevFifoControl*>(base);
  fifo.slots = base + devFifoSlotsOffset();
  fifo.slotBytes = d.slotBytes;
  return std::make_unique<DeviceConnection>(Connection::Kind::kDeviceSend, connectionName(spec, true, name()), device,
                                            alloc, hold, fifo);
}

}  // namespace chorus::transport::cuda
