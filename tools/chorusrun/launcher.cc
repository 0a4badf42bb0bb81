#include "launcher.h"

#include "base/shm.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "base/error.h"
#include "base/host_id.h"
#include "base/shm.h"
#include "exit_status.h"

namespace chorus::launcher {
namespace {

void writeAll(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t w = ::write(fd, s.data(), s.size());
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // a closed terminal or pipe: the output is lost, the job goes on
    s.remove_prefix(static_cast<size_t>(w));
  }
}

void closeFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string seconds(std::chrono::milliseconds ms) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g s", static_cast<double>(ms.count()) / 1000);
  return text;
}

}  // namespace

struct Launcher::Rank {
  SpawnedRank proc;
  bool running = false;
  RankExit exit;
  LineBuffer out;
  LineBuffer err;
};

Launcher::Launcher(JobSpec spec) : spec_(std::move(spec)) {
  // Made first, so that a signal forwarded before start() reaches the ranks once they run.
  int wake[2];
  CHORUS_CHECK_SYS(pipe2(wake, O_CLOEXEC | O_NONBLOCK), "(launcher wake-up pipe)");
  wakeRead_ = wake[0];
  wakeWrite_ = wake[1];
  if (!spec_.onLine) {
    spec_.onLine = [tag = spec_.tagOutput](int rank, Stream stream, std::string_view line) {
      std::string text = tag ? "[" + std::to_string(rank) + "] " : std::string();
      text.append(line);
      text.push_back('\n');
      writeAll(stream == Stream::kOut ? STDOUT_FILENO : STDERR_FILENO, text);
    };
  }
  if (!spec_.onNotice) {
    spec_.onNotice = [](const std::string& message) { writeAll(STDERR_FILENO, "chorusrun: " + message + "\n"); };
  }
}

Launcher::~Launcher() {
  if (running_ > 0) {
    signalAll(SIGKILL);
    for (auto& r : ranks_) {
      if (r.running) waitpid(r.proc.pid, nullptr, 0);
    }
  }
  for (auto& r : ranks_) {
    closeFd(r.proc.outFd);
    closeFd(r.proc.errFd);
    closeFd(r.proc.pidFd);
  }
  closeFd(wakeRead_);
  closeFd(wakeWrite_);
}

void Launcher::start() {
  CHORUS_CHECK_USAGE(ranks_.empty(), "a Launcher starts its job once");
  CHORUS_CHECK_ARG(spec_.nranks >= 1, "the number of ranks must be at least 1, not ", spec_.nranks);
  CHORUS_CHECK_ARG(spec_.nhosts >= 0 && spec_.nhosts <= spec_.nranks, "cannot spread ", spec_.nranks, " ranks over ",
                   spec_.nhosts, " hosts");
  CHORUS_CHECK_ARG(spec_.body || !spec_.argv.empty(), "no program to run");
  port_ = std::make_unique<PortReservation>();
  identity_.addr = port_->address();
  identity_.secret = randomHex(16);
  identity_.simulateHosts = spec_.nhosts > 0;
  if (identity_.simulateHosts) identity_.baseHostId = hostId();
  std::vector<RankPlacement> places = placeRanks(spec_.nranks, std::max(spec_.nhosts, 1));

  ranks_ = std::vector<Rank>(spec_.nranks);
  result_.ranks.resize(spec_.nranks);
  try {
    for (int rank = 0; rank < spec_.nranks; ++rank) {
      SpawnRequest request;
      request.rank = rank;
      request.argv = spec_.argv;
      request.body = spec_.body;
      request.vars = rankVariables(rank, spec_.nranks, places[rank], identity_);
      request.vars.insert(request.vars.end(), spec_.extraEnv.begin(), spec_.extraEnv.end());
      // Ranks are not in the terminal's foreground group: one reading a terminal would stop on SIGTTIN.
      request.keepStdin = rank == 0 && !isatty(STDIN_FILENO);
      ranks_[rank].proc = spawnRank(request);
      ranks_[rank].running = true;
      ranks_[rank].exit.pid = ranks_[rank].proc.pid;
      ++running_;
    }
  } catch (...) {
    signalAll(SIGKILL);
    throw;  // the destructor reaps
  }
  timeoutAt_ = Clock::now() + spec_.timeout;
}

JobResult Launcher::wait() {
  CHORUS_CHECK_USAGE(!ranks_.empty(), "Launcher::wait before start");
  while (running_ > 0) {
    pollOnce();
    handleWake();
    reap();
    auto now = Clock::now();
    if (spec_.timeout.count() > 0 && !stopping_ && running_ > 0 && now >= timeoutAt_) {
      result_.timedOut = true;
      result_.exitCode = 124;
      result_.message = "timeout after " + seconds(spec_.timeout);
      stopAll(result_.message);
    }
    if (failPending_ && !stopping_ && running_ > 0 && now >= failStopAt_) stopAll(result_.message);
    if (stopping_ && !killed_ && running_ > 0 && now >= killAt_) {
      notice("killing " + std::to_string(running_) + " rank(s) still running with SIGKILL");
      signalAll(SIGKILL);
      killed_ = true;
    }
  }
  for (int rank = 0; rank < spec_.nranks; ++rank) drain(rank, true);
  for (int rank = 0; rank < spec_.nranks; ++rank) result_.ranks[rank] = ranks_[rank].exit;
  // Shared-memory segments a rank created and no peer mapped (a rank killed during connection set-up, or a
  // job stopped by a signal) would outlive the job: every rank has exited, so they are garbage now.
  for (int rank = 0; rank < spec_.nranks; ++rank) {
    int removed = sweepSegmentsOf(ranks_[rank].proc.pid);
    if (removed > 0) {
      notice("removed " + std::to_string(removed) + " shared-memory segment(s) left by rank " + std::to_string(rank));
    }
    result_.segmentsSwept += removed;
  }
  if (spec_.keepGoing && result_.failedRank >= 0 && !result_.timedOut) {
    for (const Rank& r : ranks_) {
      if (!failed(r.exit.waitStatus)) result_.exitCode = 0;  // the survivors finished the job
    }
  }
  return result_;
}

void Launcher::forwardSignal(int sig) {
  unsigned char byte = static_cast<unsigned char>(sig);
  if (wakeWrite_ >= 0) (void)!::write(wakeWrite_, &byte, 1);
}

std::vector<pid_t> Launcher::pids() const {
  std::vector<pid_t> pids;
  for (const auto& r : ranks_) pids.push_back(r.proc.pid);
  return pids;
}

Launcher::Clock::time_point Launcher::nextDeadline() const {
  // Also wakes up periodically: a kernel without pidfd tells nothing when a rank exits.
  auto next = Clock::now() + std::chrono::milliseconds(100);
  if (spec_.timeout.count() > 0 && !stopping_) next = std::min(next, timeoutAt_);
  if (stopping_ && !killed_) next = std::min(next, killAt_);
  if (failPending_ && !stopping_) next = std::min(next, failStopAt_);
  return next;
}

void Launcher::pollOnce() {
  std::vector<pollfd> fds;
  fds.push_back({wakeRead_, POLLIN, 0});
  for (const auto& r : ranks_) {
    if (r.proc.outFd >= 0) fds.push_back({r.proc.outFd, POLLIN, 0});
    if (r.proc.errFd >= 0) fds.push_back({r.proc.errFd, POLLIN, 0});
    if (r.running && r.proc.pidFd >= 0) fds.push_back({r.proc.pidFd, POLLIN, 0});
  }
  auto wait = std::chrono::ceil<std::chrono::milliseconds>(nextDeadline() - Clock::now());
  int rc = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(wait.count(), 0)));
  if (rc < 0 && errno != EINTR) CHORUS_CHECK_SYS(rc, "(supervising the ranks)");
  for (int rank = 0; rank < spec_.nranks; ++rank) drain(rank, false);
}

void Launcher::handleWake() {
  unsigned char sigs[64];
  ssize_t n;
  while ((n = ::read(wakeRead_, sigs, sizeof(sigs))) > 0) {
    for (ssize_t i = 0; i < n; ++i) {
      int sig = sigs[i];
      if (sig == SIGINT || sig == SIGTERM) ++forwarded_;
      if ((sig == SIGINT || sig == SIGTERM) && forwarded_ > 1) {
        notice("second " + signalName(sig) + ": killing " + std::to_string(running_) + " rank(s)");
        signalAll(SIGKILL);
        killed_ = true;
      } else {
        notice("forwarding " + signalName(sig) + " to " + std::to_string(running_) + " rank(s)");
        signalAll(sig);
      }
    }
  }
}

void Launcher::drain(int rank, bool final) {
  Rank& r = ranks_[rank];
  auto pump = [&](int& fd, LineBuffer& buffer, Stream stream) {
    auto emitLine = [&](std::string_view line) { emit(rank, stream, line); };
    char chunk[65536];
    while (fd >= 0) {
      ssize_t n = ::read(fd, chunk, sizeof(chunk));
      if (n > 0) {
        buffer.append(chunk, static_cast<size_t>(n), emitLine);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        // EOF, or nothing more for now. A descendant of the rank may keep the pipe open after the rank is
        // gone; the final drain does not wait for it.
        if (n == 0 || (n < 0 && errno != EAGAIN) || final) closeFd(fd);
        break;
      }
    }
    if (fd < 0 || final || !r.running) buffer.flush(emitLine);
  };
  pump(r.proc.outFd, r.out, Stream::kOut);
  pump(r.proc.errFd, r.err, Stream::kErr);
}

void Launcher::reap() {
  for (int rank = 0; rank < spec_.nranks; ++rank) {
    Rank& r = ranks_[rank];
    if (!r.running) continue;
    int status = 0;
    pid_t pid = waitpid(r.proc.pid, &status, WNOHANG);
    if (pid == r.proc.pid) onRankExit(rank, status);
  }
}

void Launcher::onRankExit(int rank, int waitStatus) {
  Rank& r = ranks_[rank];
  r.running = false;
  r.exit.waitStatus = waitStatus;
  closeFd(r.proc.pidFd);
  --running_;
  drain(rank, false);  // its last lines come before the verdict
  if (failed(waitStatus) && spec_.keepGoing && result_.failedRank >= 0 && !result_.timedOut) {
    notice("rank " + std::to_string(rank) + " (pid " + std::to_string(r.proc.pid) + ") " +
           describeWaitStatus(waitStatus));
  }
  if (!failed(waitStatus) || result_.failedRank >= 0 || result_.timedOut) return;
  result_.failedRank = rank;
  result_.exitCode = exitCodeOf(waitStatus);
  result_.message =
      "rank " + std::to_string(rank) + " (pid " + std::to_string(r.proc.pid) + ") " + describeWaitStatus(waitStatus);
  if (running_ == 0 || stopping_ || killed_) {
    notice(result_.message);
  } else if (spec_.keepGoing) {
    notice(result_.message + "; --keep-going: the other " + std::to_string(running_) + " rank(s) go on");
  } else if (spec_.failGrace.count() > 0) {
    notice(result_.message + "; the other " + std::to_string(running_) + " rank(s) have " + seconds(spec_.failGrace) +
           " to exit before they are stopped");
    failPending_ = true;
    failStopAt_ = Clock::now() + spec_.failGrace;
  } else {
    stopAll(result_.message);
  }
}

void Launcher::signalAll(int sig) {
  // Every rank's whole process group, so that children of the rank get the signal too. The group of a rank
  // that has exited may still hold its descendants.
  for (const auto& r : ranks_) {
    if (r.proc.pid > 0) ::kill(-r.proc.pid, sig);
  }
}

void Launcher::stopAll(const std::string& why) {
  notice(why);
  notice("stopping " + std::to_string(running_) + " running rank(s): SIGTERM, then SIGKILL after " +
         seconds(spec_.grace));
  stopping_ = true;
  killAt_ = Clock::now() + spec_.grace;
  signalAll(SIGTERM);
}

void Launcher::emit(int rank, Stream stream, std::string_view line) {
  spec_.onLine(rank, stream, line);
}

void Launcher::notice(const std::string& message) {
  spec_.onNotice(message);
}

}  // namespace chorus::launcher
