#include "transport/host_fifo.h"

#include <cstdlib>
#include <cstring>

#include "base/error.h"

namespace chorus::transport {

HostFifo::HostFifo(int nslots, size_t slotBytes) {
  CHORUS_CHECK_ARG(nslots >= 1 && nslots <= kMaxSlots, "FIFO depth ", nslots, " is outside [1, ", kMaxSlots, "]");
  size_t bytes = (fifoBytes(nslots, slotBytes) + 4095) & ~size_t(4095);
  mem_ = std::aligned_alloc(4096, bytes);
  CHORUS_CHECK_SYS(mem_ == nullptr ? -1 : 0, "allocating a FIFO of ", bytes, " bytes");
  // Touch every page now so that the first transfer does not pay for page faults.
  memset(mem_, 0, bytes);
  try {
    fifo_ = fifoInit(mem_, nslots, slotBytes);
  } catch (...) {
    std::free(mem_);  // a rejected geometry must not leak the memory (the destructor will not run)
    mem_ = nullptr;
    throw;
  }
}

HostFifo::~HostFifo() {
  std::free(mem_);
}

}  // namespace chorus::transport
