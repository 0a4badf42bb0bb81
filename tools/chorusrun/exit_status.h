// Turning a rank's wait status into chorusrun's exit code and a sentence for the user.
#pragma once

#include <string>

namespace chorus::launcher {

// The exit code a shell would report for a wait status: the code itself, or 128 + signal.
int exitCodeOf(int waitStatus);

// True when the status is anything but a normal exit with code 0.
bool failed(int waitStatus);

// "exited with status 2", "killed by signal 9 (SIGKILL)", "killed by signal 11 (SIGSEGV, core dumped)".
std::string describeWaitStatus(int waitStatus);

// "SIGKILL" for 9; "SIG42" for a signal without a name.
std::string signalName(int sig);

}  // namespace chorus::launcher
