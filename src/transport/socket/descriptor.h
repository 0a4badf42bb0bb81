// What a socket receiver tells its sender: where to connect, the token to present on every stream, and the
// geometry both local FIFOs use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transport/socket/wire.h"

namespace chorus::transport::socket {

struct Descriptor {
  std::string address;  // "ip:port" of the receiver's proxy listener
  uint8_t token[kTokenBytes] = {};
  uint32_t nstreams = 0;
  uint32_t nslots = 0;
  uint64_t slotBytes = 0;

  void encode(std::vector<uint8_t>* out) const;
  static Descriptor decode(const std::vector<uint8_t>& in);
};

}  // namespace chorus::transport::socket
