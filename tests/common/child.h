// Multi-process tests: the test binary re-executes itself as each rank. A test registers a child entry point
// by name; runChildren() starts `n` copies of /proc/self/exe with CHORUS_TEST_CHILD=<name> and the
// launcher variables (CHORUS_RANK, CHORUS_WORLD_SIZE, CHORUS_ADDR, CHORUS_SECRET, and CHORUS_HOSTID for
// simulated hosts), waits for all (with a deadline), and returns their exit statuses. The binary's main
// (CHORUS_TEST_MAIN below) runs the child entry point instead of the tests when the variable is set.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace chorus::test {

using ChildMain = std::function<int(int rank, int nranks, const std::vector<std::string>& args)>;

// Registers a child entry point; returns true (for static initialization).
bool registerChild(const std::string& name, ChildMain fn);

struct ChildOptions {
  int hosts = 1;                           // simulated hosts (distinct CHORUS_HOSTID), ranks spread in blocks
  int timeoutSec = 120;                    // children still running then are killed (status -SIGKILL)
  std::vector<std::string> args;           // passed to every child
  std::map<std::string, std::string> env;  // extra environment
};

struct ChildResult {
  pid_t pid = 0;
  int exitCode = -1;  // exit status, or -signal when killed
};

// Starts the children and returns once all have exited.
std::vector<ChildResult> runChildren(const std::string& name, int n, const ChildOptions& options = {});

// Starts the children and returns their pids at once (for tests that kill or stop some of them).
std::vector<pid_t> startChildren(const std::string& name, int n, const ChildOptions& options = {});
// Waits for one child; returns exit code or -signal (-SIGKILL after timeoutSec, having killed it).
int waitChild(pid_t pid, int timeoutSec);

// Runs the registered child if CHORUS_TEST_CHILD is set (returns its exit code via *code) .
bool runChildIfRequested(int argc, char** argv, int* code);

// A free TCP port on 127.0.0.1.
int freePort();

}  // namespace chorus::test

// main() of a test binary that has child entry points.
#define CHORUS_TEST_MAIN()                                                   \
  int main(int argc, char** argv) {                                          \
    int code = 0;                                                            \
    if (::chorus::test::runChildIfRequested(argc, argv, &code)) return code; \
    ::testing::InitGoogleTest(&argc, argv);                                  \
    return RUN_ALL_TESTS();                                                  \
  }
