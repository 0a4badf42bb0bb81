#include "transport/host_fifo.h"

#include <cstdlib>
#include <cstring>
#include <memory>

#include "base/error.h"

namespace chorus::transport {

HostFifo::HostFifo(int nslots, size_t slotBytes, size_t trailerBytes) {
  CHORUS_CHECK_ARG(nslots >= 1 && nslots <= kMaxSlots, "FIFO depth ", nslots, " is outside [1, ", kMaxSlots, "]");
  size_t bytes = (fifoBytes(nslots, slotBytes, trailerBytes) + 4095) & ~size_t(4095);
  // Owned by the guard until fifoInit accepts the geometry: a rejected one must not leak the memory (the
  // destructor does not run when the constructor throws).
  std::unique_ptr<void, void (*)(void*)> mem(std::aligned_alloc(4096, bytes), std::free);
  CHORUS_CHECK_SYS(mem == nullptr ? -1 : 0, "allocating a FIFO of ", bytes, " bytes");
  // Touch every page now so that the first transfer does not pay for page faults.
  memset(mem.get(), 0, bytes);
  fifo_ = fifoInit(mem.get(), nslots, slotBytes, trailerBytes);
  mem_ = mem.release();
}

HostFifo::~HostFifo() {
  std::free(mem_);
}

}  // namespace chorus::transport
