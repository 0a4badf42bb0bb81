#include "transport/inproc/descriptor.h"

#include "transport/descriptor.h"

namespace chorus::transport::inproc {
namespace {
constexpr uint32_t kMagic = 0x43485049;  // "CHPI"
}  // namespace

void Descriptor::encode(std::vector<uint8_t>* out) const {
  DescriptorWriter w(out);
  w.put(kMagic);
  w.put(processId);
  w.put(token);
  w.put(fifo);
}

Descriptor Descriptor::decode(const std::vector<uint8_t>& in) {
  DescriptorReader r(in, "inproc");
  r.expectMagic(kMagic);
  Descriptor d;
  d.processId = r.get<uint64_t>();
  d.token = r.get<uint64_t>();
  d.fifo = r.get<uint64_t>();
  r.expectEnd();
  return d;
}

}  // namespace chorus::transport::inproc
