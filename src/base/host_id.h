// Identity of the host this process runs on: two ranks share a host (and so may use shared memory) exactly
// when their host ids are equal.
#pragma once

#include <cstdint>
#include <string>

namespace chorus {

// "hostname/boot-id", or CHORUS_HOSTID when it is set (tests place ranks on simulated hosts with it).
std::string hostId();
// A 64-bit hash of hostId(), as NCCL's hostHash.
uint64_t hostHash();
// FNV-1a 64-bit hash of a string.
uint64_t fnv1a64(const std::string& s);

}  // namespace chorus
