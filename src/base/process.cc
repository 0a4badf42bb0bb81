#include "base/process.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace chorus {

ProcessWatch::ProcessWatch(pid_t pid) : pid_(pid) {
#ifdef SYS_pidfd_open
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#endif
}

ProcessWatch::~ProcessWatch() {
  if (pidfd_ >= 0) close(pidfd_);
}

ProcessWatch::ProcessWatch(ProcessWatch&& o) noexcept {
  *this = std::move(o);
}

ProcessWatch& ProcessWatch::operator=(ProcessWatch&& o) noexcept {
  if (this != &o) {
    if (pidfd_ >= 0) close(pidfd_);
    pid_ = o.pid_;
    pidfd_ = o.pidfd_;
    o.pidfd_ = -1;
    o.pid_ = 0;
  }
  return *this;
}

bool ProcessWatch::alive() const {
  if (pid_ <= 0) return true;
  if (pidfd_ >= 0) {
    // A pidfd polls readable once the process has exited (zombie or reaped).
    pollfd p{pidfd_, POLLIN, 0};
    return poll(&p, 1, 0) == 0;
  }
  if (kill(pid_, 0) == 0) return true;
  return errno == EPERM;
}

namespace {

// The state letter of /proc/<pid>/stat, or 0 when it cannot be read.
char processState(pid_t pid) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = fopen(path, "r");
  if (f == nullptr) return 0;
  char buf[512];
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  // "pid (comm) S ...": the state follows the last ')' (comm may hold spaces and parentheses).
  const char* close = strrchr(buf, ')');
  return close != nullptr && close[1] == ' ' ? close[2] : 0;
}

}  // namespace

bool ProcessWatch::stopped(pid_t pid) {
  const char s = processState(pid);
  return s == 'T' || s == 't';
}

bool ProcessWatch::gone(pid_t pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  const char s = processState(pid);
  return s == 'Z' || s == 'X';
}

}  // namespace chorus
