// Whether the ranks of one host outnumber the CPUs they can run on, which decides how every wait of a
// communicator behaves (Comm::waitContext): spinning while the peer we wait for needs our core only delays it,
// so oversubscribed ranks yield at once; ranks with a core each spin, since a sleep costs a wake-up per step.
#pragma once

#include <cstdint>
#include <vector>

#include "base/cpu_mask.h"
#include "transport/peer_info.h"

namespace chorus::core {

// True when more ranks share this host than there are CPUs in the union of their affinity masks. A rank's own
// mask is not enough: under mpirun's default binding (or Slurm's --cpu-bind=cores) each of 2 ranks on 2 cores
// sees 1 CPU, yet together they have a core each. An empty mask (unknown) counts as every online CPU.
bool ranksOutnumberCpus(const std::vector<CpuMask>& localMasks, int onlineCpus);

// The affinity masks of the ranks in `peers` that share `hostHash` (this rank's host).
std::vector<CpuMask> localCpuMasks(const std::vector<transport::PeerInfo>& peers, uint64_t hostHash);

// Whether on some host the ranks of `peers` outnumber the CPUs of their masks together. Every rank computes the same
// answer from the same peers (the bootstrap's allgather), so a choice that all ranks must make alike (the tuner's
// algorithm) uses this, never the rank's own host alone: two hosts deciding apart ran different algorithms and waited
// for each other. A host with a rank whose mask is unknown counts as not oversubscribed (its CPU count is known
// only there).
bool anyHostOversubscribed(const std::vector<transport::PeerInfo>& peers);

}  // namespace chorus::core
