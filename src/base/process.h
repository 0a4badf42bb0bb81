// Watching another process on this host: a pidfd when the kernel has one, else kill(pid, 0).
#pragma once

#include <sys/types.h>

namespace chorus {

class ProcessWatch {
 public:
  ProcessWatch() = default;
  explicit ProcessWatch(pid_t pid);
  ~ProcessWatch();
  ProcessWatch(ProcessWatch&& o) noexcept;
  ProcessWatch& operator=(ProcessWatch&& o) noexcept;
  ProcessWatch(const ProcessWatch&) = delete;
  ProcessWatch& operator=(const ProcessWatch&) = delete;

  // False once the process has exited (or been killed). A stopped process is alive.
  bool alive() const;
  // True when the process is stopped (SIGSTOP, a debugger): state T or t in /proc/<pid>/stat.
  static bool stopped(pid_t pid);
  // True when no process `pid` runs: it does not exist, or it is a zombie not reaped yet (state Z or X).
  static bool gone(pid_t pid);
  // True when the process has begun to exit and cannot return (SIGKILL pending, or PF_EXITING on its main
  // thread) or is gone. A killed process closes its files, which is how its peers learn of the death, before
  // it becomes a zombie.
  static bool exiting(pid_t pid);
  // Waits up to `ms` for an exiting process to be gone; true when it is gone.
  static bool awaitGone(pid_t pid, int ms);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = 0;
  int pidfd_ = -1;
};

}  // namespace chorus
