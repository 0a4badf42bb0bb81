// What an in-process receiver tells its sender: where the shared FIFO is, and a token that proves the
// pointer came from a live receiver of this process (the sender dereferences it only after the token is
// found in the process-wide registry, so a stale or foreign descriptor is an error, not a crash).
#pragma once

#include <cstdint>
#include <vector>

namespace chorus::transport::inproc {

struct Descriptor {
  uint64_t processId = 0;  // the receiver's PeerInfo::processId
  uint64_t token = 0;      // key of the FIFO in the registry
  uint64_t fifo = 0;       // address of the SharedFifo

  void encode(std::vector<uint8_t>* out) const;
  static Descriptor decode(const std::vector<uint8_t>& in);
};

}  // namespace chorus::transport::inproc
