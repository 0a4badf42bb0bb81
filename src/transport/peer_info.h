// What every rank tells the others about itself at communicator creation (exchanged by the bootstrap's
// allgather, so it is plain data of fixed size).
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "base/cpu_mask.h"

namespace chorus::transport {

struct PeerInfo {
  int32_t rank = -1;
  int32_t device = -1;  // CUDA device, or -1 for a host rank
  pid_t pid = 0;
  uint64_t hostHash = 0;   // equal hostHash: same host (shared memory works)
  uint64_t processId = 0;  // equal processId: same process (direct pointers work); pid plus a random salt
  int32_t numaNode = -1;
  char hostname[64] = {};
  char busId[32] = {};  // PCI bus id of the GPU, "" for host ranks
  CpuMask cpuMask;      // the CPUs the rank may run on at init (empty: unknown); see core/oversubscription.h
};

}  // namespace chorus::transport
