// A FIFO in ordinary process memory (the in-process transport's shared FIFO, and both local FIFOs of a socket
// connection): page-aligned, zero-filled, initialized, freed on destruction.
#pragma once

#include <cstddef>

#include "transport/fifo.h"

namespace chorus::transport {

class HostFifo {
 public:
  // trailerBytes as fifoBytes's.
  HostFifo(int nslots, size_t slotBytes, size_t trailerBytes = 0);
  ~HostFifo();
  HostFifo(const HostFifo&) = delete;
  HostFifo& operator=(const HostFifo&) = delete;

  FifoControl* control() const { return fifo_; }

 private:
  void* mem_ = nullptr;
  FifoControl* fifo_ = nullptr;
};

}  // namespace chorus::transport
