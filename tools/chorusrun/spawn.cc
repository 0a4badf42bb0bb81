#include "spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "base/error.h"
#include "base/params.h"

extern char** environ;

namespace chorus::launcher {
namespace {

void writeAll(int fd, const char* s, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

void writeStr(int fd, const char* s) {
  writeAll(fd, s, strlen(s));
}

// Signals handled or ignored by the launcher must not stay so in the rank (SIG_IGN survives exec).
void resetSignals() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Runs in the child after fork: only async-signal-safe calls on the exec path, as the parent may have threads.
[[noreturn]] void runChild(const SpawnRequest& req, int outW, int errW, pid_t parent, char** argv, char** envp) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // a launcher killed with SIGKILL takes its ranks along
  if (getppid() != parent) _exit(127);
  dup2(outW, STDOUT_FILENO);
  dup2(errW, STDERR_FILENO);
  if (!req.keepStdin) {
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null >= 0) dup2(null, STDIN_FILENO);
  }
  resetSignals();
  if (req.body) {
    ::close(outW);
    ::close(errW);
    int rc = 1;
    try {
      for (const auto& [name, value] : req.vars) setenv(name.c_str(), value.c_str(), 1);
      param::reload();
      rc = req.body(req.rank);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "chorusrun: rank %d threw: %s\n", req.rank, e.what());
    }
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(rc);
  }
  execvpe(argv[0], argv, envp);
  int err = errno;
  writeStr(STDERR_FILENO, "chorusrun: cannot run '");
  writeStr(STDERR_FILENO, argv[0]);
  writeStr(STDERR_FILENO, "': ");
  writeStr(STDERR_FILENO, strerrordesc_np(err));
  writeStr(STDERR_FILENO, "\n");
  _exit(err == ENOENT ? 127 : 126);
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  p.reserve(strings.size() + 1);
  for (auto& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

}  // namespace

SpawnedRank spawnRank(const SpawnRequest& request) {
  CHORUS_CHECK_ARG(request.body || !request.argv.empty(), "rank ", request.rank, ": no program to run");
  // Everything the child needs is allocated before fork.
  std::vector<std::string> args = request.argv;
  std::vector<std::string> env = request.body ? std::vector<std::string>() : mergeEnvironment(environ, request.vars);
  std::vector<char*> argp = pointers(args);
  std::vector<char*> envp = pointers(env);

  int out[2];
  int err[2];
  CHORUS_CHECK_SYS(pipe2(out, O_CLOEXEC), "(stdout pipe of rank ", request.rank, ")");
  if (pipe2(err, O_CLOEXEC) != 0) {
    int e = errno;
    ::close(out[0]);
    ::close(out[1]);
    CHORUS_THROW(Status::kSystemError, "pipe2 (stderr pipe of rank ", request.rank, "): ", std::strerror(e));
  }
  std::fflush(stdout);  // a forked body would print the parent's buffered output again
  std::fflush(stderr);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) runChild(request, out[1], err[1], parent, argp.data(), envp.data());
  int forkErrno = errno;
  ::close(out[1]);
  ::close(err[1]);
  if (pid < 0) {
    ::close(out[0]);
    ::close(err[0]);
    CHORUS_THROW(Status::kSystemError, "fork (rank ", request.rank, "): ", std::strerror(forkErrno));
  }
  setpgid(pid, pid);  // also here, so the group exists before the parent signals it
  SpawnedRank rank;
  rank.pid = pid;
  rank.outFd = out[0];
  rank.errFd = err[0];
  fcntl(rank.outFd, F_SETFL, O_NONBLOCK);
  fcntl(rank.errFd, F_SETFL, O_NONBLOCK);
#ifdef SYS_pidfd_open
  rank.pidFd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (rank.pidFd >= 0) fcntl(rank.pidFd, F_SETFD, FD_CLOEXEC);
#endif
  return rank;
}

}  // namespace chorus::launcher
