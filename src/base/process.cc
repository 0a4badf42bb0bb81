#include "base/process.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
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

}  // namespace chorus
