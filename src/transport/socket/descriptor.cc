#include "transport/socket/descriptor.h"

#include "transport/descriptor.h"
#include "transport/fifo.h"

namespace chorus::transport::socket {
namespace {
constexpr uint32_t kMagic = 0x4348534f;  // "CHSO"
}  // namespace

void Descriptor::encode(std::vector<uint8_t>* out) const {
  DescriptorWriter w(out);
  w.put(kMagic);
  w.putString(address);
  w.putBytes(token, sizeof(token));
  w.put(nstreams);
  w.put(nslots);
  w.put(slotBytes);
}

Descriptor Descriptor::decode(const std::vector<uint8_t>& in) {
  DescriptorReader r(in, "socket");
  r.expectMagic(kMagic);
  Descriptor d;
  d.address = r.getString();
  r.getBytes(d.token, sizeof(d.token));
  d.nstreams = r.get<uint32_t>();
  d.nslots = r.get<uint32_t>();
  d.slotBytes = r.get<uint64_t>();
  r.expectEnd();
  CHORUS_CHECK_ARG(d.nstreams >= 1 && d.nstreams <= kMaxStreams && d.nslots >= 1 &&
                       d.nslots <= static_cast<uint32_t>(kMaxSlots) && d.slotBytes > 0,
                   "malformed socket connection descriptor");
  return d;
}

}  // namespace chorus::transport::socket
