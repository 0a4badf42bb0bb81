// What each rank of a job is told through its environment: where it sits (rank, local rank, simulated host)
// and how to find the others (rendezvous address and secret).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace chorus::launcher {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

struct RankPlacement {
  int host = 0;  // simulated host index
  int localRank = 0;
  int localSize = 1;
};

// Block distribution of nranks over nhosts (1 <= nhosts <= nranks): consecutive ranks share a host, and the
// first nranks % nhosts hosts get one rank more, so 5 ranks on 2 hosts are {0,1,2} and {3,4}.
std::vector<RankPlacement> placeRanks(int nranks, int nhosts);

struct JobIdentity {
  std::string addr;        // CHORUS_ADDR: "127.0.0.1:<port>"
  std::string secret;      // CHORUS_SECRET: 32 hex characters
  std::string baseHostId;  // real host id; CHORUS_HOSTID is "<base>-simhost<k>" when hosts are simulated
  bool simulateHosts = false;
};

// The CHORUS_* variables of one rank, in a fixed order.
EnvVars rankVariables(int rank, int nranks, const RankPlacement& place, const JobIdentity& job);

// nbytes random bytes from the kernel, as lowercase hex (2 * nbytes characters).
std::string randomHex(size_t nbytes);

// A copy of `base` ("NAME=VALUE" strings, like environ) with every variable in `set` replaced or added.
std::vector<std::string> mergeEnvironment(char** base, const EnvVars& set);

}  // namespace chorus::launcher
