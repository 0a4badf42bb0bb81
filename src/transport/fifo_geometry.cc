#include "transport/fifo_geometry.h"

#include <algorithm>
#include <cstdint>

#include "base/params.h"

namespace chorus::transport {

namespace {

constexpr int64_t kDeviceBuffSize = int64_t(4) << 20;

size_t slotOf(int64_t buffSize) {
  const int64_t slot = std::max<int64_t>(buffSize / kFifoSlots, 4096);
  return static_cast<size_t>(slot) & ~size_t(63);
}

}  // namespace

size_t fifoSlotBytes(bool onDevice) {
  static const size_t host = slotOf(param::BuffSize());
  static const size_t device = param::text("CHORUS_BUFFSIZE") ? host : slotOf(kDeviceBuffSize);
  return onDevice ? device : host;
}

}  // namespace chorus::transport
