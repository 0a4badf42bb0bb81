// Starting one rank: a child process in its own process group, its stdout and stderr on pipes read by the
// launcher, either executing a program or running a function (for tests that fork ranks of themselves).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "rank_env.h"

namespace chorus::launcher {

// A rank body run in a forked child instead of a program; its return value is the exit code.
using RankBody = std::function<int(int rank)>;

struct SpawnRequest {
  int rank = 0;
  std::vector<std::string> argv;  // the program (searched in PATH) and its arguments, when body is empty
  RankBody body;
  EnvVars vars;            // variables that replace or extend the launcher's environment
  bool keepStdin = false;  // otherwise stdin is /dev/null
};

struct SpawnedRank {
  pid_t pid = -1;  // also the process group id of the rank
  int outFd = -1;  // read ends, non-blocking, close-on-exec
  int errFd = -1;
  int pidFd = -1;  // readable once the process exits; -1 where the kernel has no pidfd_open
};

// Forks the rank. The rank is killed (PR_SET_PDEATHSIG) when the thread that started it exits, so a job is
// started from a thread that outlives it. A program that cannot be executed makes the child print "chorusrun: cannot
// run ..." on its stderr and exit with 127 (not found) or 126, as a shell does. Throws chorus::Error when fork or pipe
// fails.
SpawnedRank spawnRank(const SpawnRequest& request);

}  // namespace chorus::launcher
