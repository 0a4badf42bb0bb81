#include "exit_status.h"

#include <string.h>
#include <sys/wait.h>

namespace chorus::launcher {

int exitCodeOf(int waitStatus) {
  if (WIFEXITED(waitStatus)) return WEXITSTATUS(waitStatus);
  if (WIFSIGNALED(waitStatus)) return 128 + WTERMSIG(waitStatus);
  return 1;
}

bool failed(int waitStatus) {
  return !(WIFEXITED(waitStatus) && WEXITSTATUS(waitStatus) == 0);
}

std::string signalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return std::string("SIG") + (abbrev != nullptr ? abbrev : std::to_string(sig));
}

std::string describeWaitStatus(int waitStatus) {
  if (WIFEXITED(waitStatus)) return "exited with status " + std::to_string(WEXITSTATUS(waitStatus));
  if (WIFSIGNALED(waitStatus)) {
    int sig = WTERMSIG(waitStatus);
    std::string core = WCOREDUMP(waitStatus) ? ", core dumped" : "";
    return "killed by signal " + std::to_string(sig) + " (" + signalName(sig) + core + ")";
  }
  return "ended with wait status " + std::to_string(waitStatus);
}

}  // namespace chorus::launcher
