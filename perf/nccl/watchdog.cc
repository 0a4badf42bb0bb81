// -T: a watchdog thread that, when a test runs past its deadline, aborts every communicator (which unblocks
// the ranks' waits) and ends the process with status 3; and fatal errors, which defer to a firing watchdog.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "driver.h"

namespace chorus::perf {
namespace {

using Clock = std::chrono::steady_clock;

struct WatchdogState {
  int timeoutSec = 0;
  const char* program = "";
  std::atomic<int64_t> deadlineNs{0};
  std::atomic<bool> fired{false};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<chorusComm_t> comms;
  std::thread thread;
};

WatchdogState& state() {
  static WatchdogState* s = new WatchdogState();  // never destroyed: threads may use it until _exit
  return *s;
}

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

void watch() {
  WatchdogState& s = state();
  while (!s.stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const int64_t deadline = s.deadlineNs.load();
    if (deadline == 0 || nowNs() < deadline) continue;
    s.fired.store(true);
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    std::fprintf(stderr, "%s: %s: Test timeout (%ds): aborting the communicators\n", host, s.program, s.timeoutSec);
    std::fflush(stdout);
    std::fflush(stderr);
    {
      std::lock_guard<std::mutex> lock(s.mu);
      for (chorusComm_t c : s.comms) chorusCommAbort(c);
    }
    _exit(kExitTimeout);
  }
}

}  // namespace

void watchdogStart(int timeoutSec, const char* programName) {
  WatchdogState& s = state();
  s.timeoutSec = timeoutSec;
  s.program = programName;
  if (timeoutSec <= 0) return;
  watchdogArm();
  s.thread = std::thread(watch);
}

void watchdogWatch(chorusComm_t comm) {
  WatchdogState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.comms.push_back(comm);
}

void watchdogArm() {
  WatchdogState& s = state();
  if (s.timeoutSec > 0) s.deadlineNs.store(nowNs() + int64_t{s.timeoutSec} * 1000000000);
}

void watchdogStop() {
  WatchdogState& s = state();
  s.deadlineNs.store(0);
  if (!s.thread.joinable()) return;
  s.stop.store(true);
  s.thread.join();
  std::lock_guard<std::mutex> lock(s.mu);
  s.comms.clear();
}

void fatal(const std::string& message) {
  WatchdogState& s = state();
  if (s.fired.load()) {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // the watchdog exits with its own status
  }
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n", s.program, message.c_str());
  std::fflush(stderr);
  _exit(kExitFailure);
}

void checkChorus(chorusResult_t result, const char* call, const RankState& rank) {
  if (result == chorusSuccess) return;
  const char* detail = chorusGetLastError(rank.comm);
  fatal("rank " + std::to_string(rank.rank) + ": " + call + " failed: " + chorusGetErrorString(result) +
        (detail != nullptr && *detail != '\0' ? std::string(" (") + detail + ")" : std::string()));
}

}  // namespace chorus::perf
