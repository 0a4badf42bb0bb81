#include "transport/fifo_geometry.h"

#include <algorithm>
#include <cstdint>

#include "base/params.h"

namespace chorus::transport {

size_t fifoSlotBytes() {
  static const size_t bytes = [] {
    const int64_t slot = std::max<int64_t>(param::BuffSize() / kFifoSlots, 4096);
    return static_cast<size_t>(slot) & ~size_t(63);
  }();
  return bytes;
}

}  // namespace chorus::transport
