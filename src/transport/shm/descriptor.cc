#include "transport/shm/descriptor.h"

#include "transport/descriptor.h"
#include "transport/fifo.h"

namespace chorus::transport::shm {
namespace {
constexpr uint32_t kMagic = 0x43485348;  // "CHSH"
}  // namespace

void Descriptor::encode(std::vector<uint8_t>* out) const {
  DescriptorWriter w(out);
  w.put(kMagic);
  w.putString(name);
  w.put(nslots);
  w.put(slotBytes);
  w.put(static_cast<int64_t>(pid));
  w.put(fifoAddr);
}

Descriptor Descriptor::decode(const std::vector<uint8_t>& in) {
  DescriptorReader r(in, "shm");
  r.expectMagic(kMagic);
  Descriptor d;
  d.name = r.getString();
  d.nslots = r.get<uint32_t>();
  d.slotBytes = r.get<uint64_t>();
  d.pid = static_cast<pid_t>(r.get<int64_t>());
  d.fifoAddr = r.get<uint64_t>();
  r.expectEnd();
  CHORUS_CHECK_ARG(!d.name.empty() && d.nslots >= 1 && d.nslots <= static_cast<uint32_t>(kMaxSlots) && d.slotBytes > 0,
                   "malformed shm connection descriptor");
  return d;
}

}  // namespace chorus::transport::shm
