// What a shared-memory receiver tells its sender: the name of the segment holding the FIFO, its geometry, and
// where the receiver mapped it (so that the sender can test Cross Memory Attach on it).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace chorus::transport::shm {

struct Descriptor {
  std::string name;  // POSIX shm name, unlinked by the sender once it has mapped the segment
  uint32_t nslots = 0;
  uint64_t slotBytes = 0;
  pid_t pid = 0;          // the receiver's process (for messages)
  uint64_t fifoAddr = 0;  // where the FIFO lies in the receiver's process: the sender's test read of it (CMA)

  void encode(std::vector<uint8_t>* out) const;
  static Descriptor decode(const std::vector<uint8_t>& in);
};

}  // namespace chorus::transport::shm
