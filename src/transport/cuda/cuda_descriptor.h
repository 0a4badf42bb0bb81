// What a receiver tells a sender about a device FIFO it created, so that the sender can write into it: the
// wire format of the CUDA transport's connection descriptor (sent through the bootstrap like every
// transport's descriptor). Plain bytes, no CUDA types: serialized and parsed, and tested, on any machine.
//
// How the sender reaches the FIFO is the kind:
//   kDirect      same process: the pointer itself (same device, or peer access enabled between the devices);
//   kIpc         same host, other process: a cudaIpcMemHandle_t (64 bytes) of the receiver's allocation and
//                the FIFO's offset in it;
//   kHostStaged  reserved for peers on other hosts (pinned host FIFOs and a host proxy forwarding slots):
//                not implemented, the CUDA transport refuses such pairs (transport.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace chorus::transport::cuda {

enum class DevFifoKind : uint32_t { kDirect = 1, kIpc = 2, kHostStaged = 3 };

constexpr size_t kIpcHandleBytes = 64;  // sizeof(cudaIpcMemHandle_t)

struct DevFifoDescriptor {
  DevFifoKind kind = DevFifoKind::kDirect;
  int32_t device = -1;                      // the receiver's CUDA device
  uint64_t processId = 0;                   // the receiver's core::processId() (kDirect is only valid inside it)
  uint64_t pointer = 0;                     // kDirect: the FIFO's address
  uint8_t ipcHandle[kIpcHandleBytes] = {};  // kIpc
  uint64_t ipcOffset = 0;                   // kIpc: FIFO offset inside the IPC allocation
  uint64_t slotBytes = 0;
  uint32_t nslots = 0;
};

// Serializes with a magic and a version; parse() throws chorus::Error (chorusInternalError) naming what is
// wrong for a truncated, foreign or inconsistent buffer.
std::vector<uint8_t> serialize(const DevFifoDescriptor& d);
DevFifoDescriptor parseDevFifoDescriptor(const std::vector<uint8_t>& bytes);

}  // namespace chorus::transport::cuda
