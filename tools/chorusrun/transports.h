// Which transports can work on this machine, as chorusrun --info reports them: each is probed the way the
// transport itself would fail (a full /dev/shm, a forbidden process_vm_readv, no RDMA device, no GPU).
#pragma once

#include <string>
#include <vector>

#include "machine.h"

namespace chorus::launcher {

struct TransportProbe {
  std::string name;  // inproc, shm, cma, socket, ibverbs, cuda
  bool usable = false;
  std::string detail;  // what was found, or why it is not usable
};

std::vector<TransportProbe> probeTransports(const MachineFacts& machine);

}  // namespace chorus::launcher
