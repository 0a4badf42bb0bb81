#include "base/process.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
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

// The state letter and the flags of /proc/<pid>/stat; state 0 when it cannot be read.
struct StatFields {
  char state = 0;
  unsigned long flags = 0;
};

StatFields processStat(pid_t pid) {
  StatFields out;
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = fopen(path, "r");
  if (f == nullptr) return out;
  char buf[512];
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  // "pid (comm) S ppid pgrp session tty tpgid flags ...": the fields follow the last ')' (comm may hold spaces
  // and parentheses).
  const char* close = strrchr(buf, ')');
  if (close == nullptr || close[1] != ' ') return out;
  int ppid = 0, pgrp = 0, session = 0, tty = 0, tpgid = 0;
  char state = 0;
  if (sscanf(close + 2, "%c %d %d %d %d %d %lu", &state, &ppid, &pgrp, &session, &tty, &tpgid, &out.flags) >= 1) {
    out.state = state;
  }
  return out;
}

char processState(pid_t pid) {
  return processStat(pid).state;
}

constexpr unsigned long kPfExiting = 0x4;  // PF_EXITING (include/linux/sched.h): set first thing in do_exit

// True when SIGKILL is pending for the process (SigPnd: its main thread; ShdPnd: the thread group). kill()
// marks it at once; the process starts to exit when next scheduled.
bool killPending(pid_t pid) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/status", static_cast<int>(pid));
  FILE* f = fopen(path, "r");
  if (f == nullptr) return false;
  char line[256];
  bool pending = false;
  while (!pending && fgets(line, sizeof(line), f) != nullptr) {
    if (strncmp(line, "SigPnd:", 7) != 0 && strncmp(line, "ShdPnd:", 7) != 0) continue;
    const unsigned long long mask = strtoull(line + 7, nullptr, 16);
    pending = (mask & (1ULL << (SIGKILL - 1))) != 0;
  }
  fclose(f);
  return pending;
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

bool ProcessWatch::exiting(pid_t pid) {
  if (gone(pid)) return true;
  return (processStat(pid).flags & kPfExiting) != 0 || killPending(pid);
}

bool ProcessWatch::awaitGone(pid_t pid, int ms) {
  for (int waited = 0; !gone(pid); ++waited) {
    if (waited >= ms || !exiting(pid)) return false;
    usleep(1000);
  }
  return true;
}

}  // namespace chorus
