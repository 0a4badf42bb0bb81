// Reads rank, size and the rendezvous address from the launcher's environment (chorusrun, torchrun,
// Open MPI, PMI, Slurm) for chorusCommInitFromEnv.
#pragma once

#include <string>

namespace chorus::core {

struct LaunchInfo {
  int rank = -1;
  int size = -1;
  std::string rankSource;      // which variables gave rank and size, for messages: "CHORUS_RANK/CHORUS_WORLD_SIZE"
  std::string addr;            // host:port of the rendezvous; empty: meet through rendezvousFile
  std::string addrSource;      // "CHORUS_ADDR" or "MASTER_ADDR/MASTER_PORT"
  std::string rendezvousFile;  // without an address, on one host: the job's file (job_rendezvous.h)
  std::string secretHex;       // CHORUS_SECRET
};

// Throws chorusInvalidArgument when no launcher's variables are set, when they are malformed, when two
// launchers' variables disagree (naming both), or when there is no address and the ranks cannot meet through
// a file (naming the variables to set).
LaunchInfo readLaunchInfo();

}  // namespace chorus::core
