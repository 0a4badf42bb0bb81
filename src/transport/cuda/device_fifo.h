// Device FIFOs: the connection layout of the CUDA transport (NCCL's Simple protocol), shared by the kernels
// (collectives/device/device_prims.cuh), the transport that builds them (transport.h here), and the host tests
// that check the offsets. Plain data and CHORUS_HOST_DEVICE arithmetic: no CUDA types.
//
// One FIFO carries one direction of one (peer, lane) pair. It lives in the receiver's memory: device memory
// for a GPU peer on the same host (mapped by the sender through a direct pointer, peer access or CUDA IPC),
// or pinned, device-mapped host memory when a host proxy sits at either end (peers on other hosts).
//
//   DevFifoControl   tail (producer) | head (consumer) | slot sizes   each counter on its own 128-byte line
//   slot 0 .. slot nslots-1                                            nslots * slotBytes, 4 KiB-aligned
//
// The producer's block waits until tail - head < nslots, fills slot tail % nslots with bulk 16-byte stores
// (all threads), stores the payload size, barriers, and one thread issues a system-scope fence and then
// stores tail + 1 (release). The consumer's thread 0 waits until tail > head (acquire), the block barriers,
// every thread reads the slot, the block barriers again and thread 0 stores head + 1. Counters are 64-bit
// and never wrap in practice; they persist across kernels (each launch reads its side's counter first).
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/host_device.h"
#include "transport/fifo_geometry.h"

namespace chorus::transport::cuda {

constexpr uint32_t kDevFifoSlots = kFifoSlots;  // fifo_geometry.h
constexpr size_t kDevFifoLine = 128;            // GPU cache line / sector group: one writer per line
constexpr size_t kDevFifoSlotAlign = 4096;      // slots start on a page (IPC and vector alignment)

struct DevFifoControl {
  alignas(kDevFifoLine) uint64_t tail;                  // slots published by the producer
  alignas(kDevFifoLine) uint64_t head;                  // slots freed by the consumer
  alignas(kDevFifoLine) uint64_t sizes[kDevFifoSlots];  // payload bytes of each published slot
  alignas(kDevFifoLine) uint32_t closed;                // set by the host when an end goes away (peer death)
};
static_assert(sizeof(DevFifoControl) % kDevFifoLine == 0, "control lines");

// Byte offset of the first slot from the start of the FIFO.
CHORUS_HOST_DEVICE size_t devFifoSlotsOffset() {
  return (sizeof(DevFifoControl) + kDevFifoSlotAlign - 1) & ~(kDevFifoSlotAlign - 1);
}
// Byte offset of slot `step % nslots`.
CHORUS_HOST_DEVICE size_t devFifoSlotOffset(uint64_t step, size_t slotBytes) {
  return devFifoSlotsOffset() + static_cast<size_t>(step % kDevFifoSlots) * slotBytes;
}
// Bytes one FIFO occupies.
CHORUS_HOST_DEVICE size_t devFifoBytes(size_t slotBytes) {
  return devFifoSlotsOffset() + kDevFifoSlots * slotBytes;
}

// One end of a connection as a kernel sees it: where the FIFO is (in this rank's address space) and its
// geometry. Plain data, copied into kernel arguments.
struct DevConn {
  DevFifoControl* ctrl = nullptr;
  char* slots = nullptr;  // == (char*)ctrl + devFifoSlotsOffset()
  uint64_t slotBytes = 0;
};

}  // namespace chorus::transport::cuda
