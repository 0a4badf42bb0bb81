// ProcessWatch on real child processes: a running process is neither gone nor exiting; a zombie is gone; a
// stopped process is stopped and not exiting; awaitGone returns at once for a process that is not exiting (a
// live peer never costs the segment sweep a wait) and true for one that has exited.
#include "base/process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace chorus {
namespace {

pid_t spawnSleeper() {
  pid_t pid = fork();
  if (pid == 0) {
    for (;;) pause();
  }
  return pid;
}

TEST(ProcessWatch, ARunningProcessIsNeitherGoneNorExiting) {
  pid_t pid = spawnSleeper();
  ASSERT_GT(pid, 0);
  EXPECT_FALSE(ProcessWatch::gone(pid));
  EXPECT_FALSE(ProcessWatch::exiting(pid));
  ProcessWatch watch(pid);
  EXPECT_TRUE(watch.alive());
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(ProcessWatch::awaitGone(pid, 500));
  // Not exiting: no wait at all (a live peer on the destroy path costs nothing).
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

TEST(ProcessWatch, AKilledProcessIsGoneAsAZombieAndOnceReaped) {
  pid_t pid = spawnSleeper();
  ASSERT_GT(pid, 0);
  ProcessWatch watch(pid);
  kill(pid, SIGKILL);
  // Not reaped yet: a zombie, which is gone; awaitGone sees it within its bound.
  EXPECT_TRUE(ProcessWatch::awaitGone(pid, 2000));
  EXPECT_TRUE(ProcessWatch::gone(pid));
  EXPECT_TRUE(ProcessWatch::exiting(pid));
  EXPECT_FALSE(watch.alive());
  waitpid(pid, nullptr, 0);
  EXPECT_TRUE(ProcessWatch::gone(pid));
}

TEST(ProcessWatch, AStoppedProcessIsStoppedAndNotExiting) {
  pid_t pid = spawnSleeper();
  ASSERT_GT(pid, 0);
  kill(pid, SIGSTOP);
  for (int i = 0; i < 2000 && !ProcessWatch::stopped(pid); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(ProcessWatch::stopped(pid));
  EXPECT_FALSE(ProcessWatch::exiting(pid));
  EXPECT_FALSE(ProcessWatch::gone(pid));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

}  // namespace
}  // namespace chorus
