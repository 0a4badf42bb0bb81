// The launcher library behind chorusrun, also used by multi-process tests: starts the ranks of a job on this
// machine with their CHORUS_* environment, relays their output line by line (tagged with the rank on request), stops
// the job when a rank fails or the timeout passes, and forwards signals to every rank's process group.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "line_buffer.h"
#include "port_reservation.h"
#include "rank_env.h"
#include "spawn.h"

namespace chorus::launcher {

enum class Stream { kOut, kErr };

// Receives every line a rank writes, without its '\n'. The default writes the line to the launcher's stdout
// or stderr as it came, as mpirun does; with JobSpec::tagOutput, as "[rank] line".
using LineHandler = std::function<void(int rank, Stream stream, std::string_view line)>;
// Receives the launcher's own messages ("rank 3 (pid 12) exited with status 2"). The default writes
// "chorusrun: <message>" to stderr.
using NoticeHandler = std::function<void(const std::string& message)>;

struct JobSpec {
  int nranks = 1;
  int nhosts = 0;                         // simulated hosts with distinct CHORUS_HOSTID; 0: none (the real host)
  std::vector<std::string> argv;          // program and arguments; or:
  RankBody body;                          // a function each forked rank runs (tests)
  EnvVars extraEnv;                       // -x NAME=VALUE: set after, and so over, the CHORUS_* variables
  std::chrono::milliseconds timeout{0};   // 0: none
  std::chrono::milliseconds grace{2000};  // between SIGTERM and SIGKILL when stopping ranks
  // After a rank fails, the others get this long to report the library's error and exit by themselves before
  // they are stopped (SIGTERM, then SIGKILL after `grace`). 0: stop them at once.
  std::chrono::milliseconds failGrace{2000};
  // A failing rank does not stop the job (elastic training: the survivors shrink their communicators and go
  // on). The job's status is then 0 when any rank exited with 0, else the first failing rank's.
  bool keepGoing = false;
  bool tagOutput = false;  // --tag-output: the default LineHandler prefixes "[rank] "
  LineHandler onLine;
  NoticeHandler onNotice;
};

struct RankExit {
  pid_t pid = -1;
  int waitStatus = 0;
};

struct JobResult {
  int exitCode = 0;     // 0, the first failing rank's code (128 + signal when killed), or 124 on timeout
  int failedRank = -1;  // the first rank that failed, -1 when none did
  bool timedOut = false;
  std::string message;          // why the job failed; empty on success
  std::vector<RankExit> ranks;  // indexed by rank
  int segmentsSwept = 0;        // chorus shared-memory segments the ranks left behind, removed after the job
};

class Launcher {
 public:
  explicit Launcher(JobSpec spec);
  // Kills (SIGKILL) and reaps ranks still running.
  ~Launcher();
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // Starts every rank. Throws chorus::Error when the job cannot be started; ranks already started are killed.
  void start();
  // Relays output and supervises until every rank has exited.
  JobResult wait();
  JobResult run() {
    start();
    return wait();
  }

  // Asks wait() to send sig to every rank's process group. Async-signal-safe: call it from a signal handler
  // or another thread. A second SIGINT or SIGTERM kills the ranks with SIGKILL.
  void forwardSignal(int sig);

  const std::string& address() const { return identity_.addr; }
  const std::string& secret() const { return identity_.secret; }
  std::vector<pid_t> pids() const;

 private:
  struct Rank;
  using Clock = std::chrono::steady_clock;

  void pollOnce();
  void handleWake();
  void drain(int rank, bool final);
  void reap();
  void onRankExit(int rank, int waitStatus);
  void signalAll(int sig);
  void stopAll(const std::string& why);
  void emit(int rank, Stream stream, std::string_view line);
  void notice(const std::string& message);
  Clock::time_point nextDeadline() const;

  JobSpec spec_;
  std::unique_ptr<PortReservation> port_;
  JobIdentity identity_;
  std::vector<Rank> ranks_;
  int running_ = 0;
  int wakeRead_ = -1;
  int wakeWrite_ = -1;
  int forwarded_ = 0;  // SIGINT/SIGTERM forwarded so far
  bool stopping_ = false;
  bool killed_ = false;
  bool failPending_ = false;  // a rank failed: the others are stopped at failStopAt_ unless they exit first
  Clock::time_point failStopAt_;
  Clock::time_point killAt_;
  Clock::time_point timeoutAt_;
  JobResult result_;
};

}  // namespace chorus::launcher
