// The geometry of every FIFO a communicator builds, decided here and nowhere else: how many slots a FIFO has
// and how many bytes a slot holds. The host FIFOs (fifo.h), the device FIFOs (cuda/device_fifo.h, whose
// kernels index slots with the constant), the executors (a Primitives call moves its chunk one slot at a time)
// and the tuner (chunk sizes are whole slots) all read it from here.
#pragma once

#include <cstddef>

namespace chorus::transport {

// Slots per FIFO: a power of two (the counters wrap), enough to keep two chunks of four slots in flight.
constexpr int kFifoSlots = 8;

// Bytes per slot: CHORUS_BUFFSIZE (bytes of slots per connection) over kFifoSlots, at least 4 KiB, rounded down
// to a multiple of 64 so that every slot starts on its own cache line. Read once per process. The FIFOs of
// ranks on a GPU (onDevice) hold 4 MiB unless CHORUS_BUFFSIZE says otherwise, as NCCL's: a slot is what one
// CUDA block moves between two waits on its peers, and measured on an H100 (docs/cuda.md) 512 KiB slots
// moved a 2-rank all-reduce 1.5x faster than the host's 128 KiB.
size_t fifoSlotBytes(bool onDevice = false);

}  // namespace chorus::transport
