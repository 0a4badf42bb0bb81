// The launcher library: rank placement, the environment of each rank, output relay, failure handling.
#include "launcher.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <sstream>

#include "base/error.h"
#include "base/host_id.h"
#include "exit_status.h"
#include "rank_env.h"

namespace chorus::launcher {
namespace {

using namespace std::chrono_literals;

// Runs a job and collects its output lines and notices.
struct Captured {
  std::map<int, std::vector<std::string>> out;
  std::map<int, std::vector<std::string>> err;
  std::vector<std::string> notices;
  JobResult result;
  std::string addr;
  std::string secret;
};

Captured runJob(JobSpec spec) {
  Captured c;
  spec.onLine = [&c](int rank, Stream stream, std::string_view line) {
    (stream == Stream::kOut ? c.out : c.err)[rank].emplace_back(line);
  };
  spec.onNotice = [&c](const std::string& m) { c.notices.push_back(m); };
  Launcher launcher(std::move(spec));
  launcher.start();
  c.addr = launcher.address();
  c.secret = launcher.secret();
  c.result = launcher.wait();
  return c;
}

std::vector<std::string> shell(const std::string& script) {
  return {"/bin/sh", "-c", script};
}

const char kPrintEnv[] =
    "echo $CHORUS_RANK $CHORUS_WORLD_SIZE $CHORUS_LOCAL_RANK $CHORUS_LOCAL_SIZE $CHORUS_ADDR $CHORUS_SECRET "
    "${CHORUS_HOSTID-unset}";

struct EnvLine {
  int rank, size, localRank, localSize;
  std::string addr, secret, hostId;
};

EnvLine parseEnvLine(const std::string& line) {
  EnvLine e;
  std::istringstream(line) >> e.rank >> e.size >> e.localRank >> e.localSize >> e.addr >> e.secret >> e.hostId;
  return e;
}

TEST(PlaceRanks, BlocksWithTheRemainderOnTheFirstHosts) {
  auto p = placeRanks(5, 2);
  ASSERT_EQ(p.size(), 5u);
  int hosts[] = {0, 0, 0, 1, 1}, locals[] = {0, 1, 2, 0, 1}, sizes[] = {3, 3, 3, 2, 2};
  for (int r = 0; r < 5; ++r) {
    EXPECT_EQ(p[r].host, hosts[r]) << r;
    EXPECT_EQ(p[r].localRank, locals[r]) << r;
    EXPECT_EQ(p[r].localSize, sizes[r]) << r;
  }
  for (auto [n, k] : {std::pair{1, 1}, {4, 2}, {7, 3}, {8, 8}, {9, 4}}) {
    auto q = placeRanks(n, k);
    ASSERT_EQ(static_cast<int>(q.size()), n);
    EXPECT_EQ(q.back().host, k - 1);
    for (int r = 1; r < n; ++r) EXPECT_LE(q[r - 1].host, q[r].host);
  }
  EXPECT_THROW(placeRanks(2, 3), chorus::Error);
}

TEST(RankEnv, MergeReplacesAndAdds) {
  const char* base[] = {"A=1", "CHORUS_RANK=9", "B=2", nullptr};
  auto env = mergeEnvironment(const_cast<char**>(base), {{"CHORUS_RANK", "0"}, {"C", "3"}, {"C", "4"}});
  EXPECT_EQ(env, (std::vector<std::string>{"A=1", "B=2", "CHORUS_RANK=0", "C=4"}));
  EXPECT_EQ(randomHex(16).size(), 32u);
  EXPECT_NE(randomHex(16), randomHex(16));
}

class LauncherEnv : public ::testing::TestWithParam<int> {};

TEST_P(LauncherEnv, EveryRankGetsItsVariables) {
  unsetenv("CHORUS_HOSTID");
  int n = GetParam();
  JobSpec spec;
  spec.nranks = n;
  spec.argv = shell(kPrintEnv);
  Captured c = runJob(std::move(spec));
  EXPECT_EQ(c.result.exitCode, 0);
  EXPECT_EQ(c.result.failedRank, -1);
  EXPECT_EQ(c.secret.size(), 32u);
  EXPECT_EQ(c.secret.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(c.addr.rfind("127.0.0.1:", 0), 0u);
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(c.out[r].size(), 1u) << "rank " << r;
    EnvLine e = parseEnvLine(c.out[r][0]);
    EXPECT_EQ(e.rank, r);
    EXPECT_EQ(e.size, n);
    EXPECT_EQ(e.localRank, r);
    EXPECT_EQ(e.localSize, n);
    EXPECT_EQ(e.addr, c.addr);
    EXPECT_EQ(e.secret, c.secret);
    EXPECT_EQ(e.hostId, "unset");
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, LauncherEnv, ::testing::Values(1, 3, 5));

TEST(Launcher, SimulatedHostsHaveDistinctHostIdsAndLocalRanks) {
  unsetenv("CHORUS_HOSTID");
  JobSpec spec;
  spec.nranks = 5;
  spec.nhosts = 2;
  spec.argv = shell(kPrintEnv);
  Captured c = runJob(std::move(spec));
  ASSERT_EQ(c.result.exitCode, 0);
  std::string base = hostId();
  int locals[] = {0, 1, 2, 0, 1}, sizes[] = {3, 3, 3, 2, 2}, hosts[] = {0, 0, 0, 1, 1};
  for (int r = 0; r < 5; ++r) {
    ASSERT_EQ(c.out[r].size(), 1u);
    EnvLine e = parseEnvLine(c.out[r][0]);
    EXPECT_EQ(e.localRank, locals[r]) << r;
    EXPECT_EQ(e.localSize, sizes[r]) << r;
    EXPECT_EQ(e.hostId, base + "-simhost" + std::to_string(hosts[r])) << r;
    EXPECT_EQ(e.addr, c.addr);
  }
}

TEST(Launcher, ExtraVariablesOverrideDefaults) {
  JobSpec spec;
  spec.nranks = 2;
  spec.argv = shell("echo $FOO $CHORUS_LOCAL_SIZE");
  spec.extraEnv = {{"FOO", "bar baz"}, {"CHORUS_LOCAL_SIZE", "7"}};
  Captured c = runJob(std::move(spec));
  ASSERT_EQ(c.result.exitCode, 0);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(c.out[r], std::vector<std::string>{"bar baz 7"});
}

TEST(Launcher, OutputIsSplitIntoLinesPerStream) {
  JobSpec spec;
  spec.nranks = 2;
  spec.argv = shell("echo a$CHORUS_RANK; echo e$CHORUS_RANK >&2; printf 'b\\n\\nc'; printf tail >&2");
  Captured c = runJob(std::move(spec));
  ASSERT_EQ(c.result.exitCode, 0);
  for (int r = 0; r < 2; ++r) {
    std::string s = std::to_string(r);
    EXPECT_EQ(c.out[r], (std::vector<std::string>{"a" + s, "b", "", "c"}));
    EXPECT_EQ(c.err[r], (std::vector<std::string>{"e" + s, "tail"}));
  }
}

TEST(Launcher, FunctionRanksFailAndTheOthersAreStopped) {
  JobSpec spec;
  spec.nranks = 3;
  spec.body = [](int rank) {
    if (rank == 2) return 5;
    pause();  // until the launcher's SIGTERM
    return 0;
  };
  spec.failGrace = 200ms;
  Captured c = runJob(std::move(spec));
  EXPECT_EQ(c.result.exitCode, 5);
  EXPECT_EQ(c.result.failedRank, 2);
  ASSERT_EQ(c.result.ranks.size(), 3u);
  for (int r : {0, 1}) {
    ASSERT_TRUE(WIFSIGNALED(c.result.ranks[r].waitStatus)) << r;
    EXPECT_EQ(WTERMSIG(c.result.ranks[r].waitStatus), SIGTERM);
  }
  ASSERT_FALSE(c.notices.empty());
  EXPECT_NE(c.notices[0].find("rank 2 (pid " + std::to_string(c.result.ranks[2].pid) + ") exited with status 5"),
            std::string::npos)
      << c.notices[0];
}

// Issue 13 item 7: survivors of a failed rank get a grace period to report their own error and exit.
TEST(Launcher, SurvivorsOfAFailedRankExitOnTheirOwnWithinTheGracePeriod) {
  JobSpec spec;
  spec.nranks = 3;
  spec.failGrace = 3000ms;
  spec.body = [](int rank) {
    if (rank == 2) return 5;
    usleep(300000);  // the library's error reaches the survivor, which reports it and exits
    return 7;
  };
  auto start = std::chrono::steady_clock::now();
  Captured c = runJob(std::move(spec));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2500ms);
  EXPECT_EQ(c.result.exitCode, 5);
  EXPECT_EQ(c.result.failedRank, 2);
  for (int r : {0, 1}) {
    ASSERT_TRUE(WIFEXITED(c.result.ranks[r].waitStatus)) << r;
    EXPECT_EQ(WEXITSTATUS(c.result.ranks[r].waitStatus), 7) << r;
  }
  ASSERT_FALSE(c.notices.empty());
  EXPECT_NE(c.notices[0].find("have 3"), std::string::npos) << c.notices[0];
}

// --keep-going: a failed rank does not stop the others; the job succeeds when the survivors do.
TEST(Launcher, KeepGoingLetsTheSurvivorsFinish) {
  JobSpec spec;
  spec.nranks = 3;
  spec.keepGoing = true;
  spec.failGrace = 100ms;  // ignored under keep-going
  spec.body = [](int rank) {
    if (rank == 1) raise(SIGKILL);
    usleep(600000);
    return 0;
  };
  Captured c = runJob(std::move(spec));
  EXPECT_EQ(c.result.exitCode, 0);
  EXPECT_EQ(c.result.failedRank, 1);
  for (int r : {0, 2}) {
    ASSERT_TRUE(WIFEXITED(c.result.ranks[r].waitStatus)) << r;
    EXPECT_EQ(WEXITSTATUS(c.result.ranks[r].waitStatus), 0) << r;
  }
  ASSERT_FALSE(c.notices.empty());
  EXPECT_NE(c.notices[0].find("--keep-going"), std::string::npos) << c.notices[0];
}

TEST(Launcher, TimeoutEscalatesToSigkillAfterTheGracePeriod) {
  JobSpec spec;
  spec.nranks = 2;
  spec.body = [](int) {
    signal(SIGTERM, SIG_IGN);
    for (;;) pause();
    return 0;
  };
  spec.timeout = 200ms;
  spec.grace = 200ms;
  auto start = std::chrono::steady_clock::now();
  Captured c = runJob(std::move(spec));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(c.result.exitCode, 124);
  EXPECT_TRUE(c.result.timedOut);
  EXPECT_EQ(c.result.failedRank, -1);
  for (const auto& r : c.result.ranks) {
    ASSERT_TRUE(WIFSIGNALED(r.waitStatus));
    EXPECT_EQ(WTERMSIG(r.waitStatus), SIGKILL);
  }
}

TEST(Launcher, ForwardedSignalReachesEveryRank) {
  JobSpec spec;
  spec.nranks = 2;
  spec.argv = shell("trap 'echo got-usr1; exit 0' USR1; echo ready; sleep 30 & wait");
  Captured c;
  Launcher* launcher = nullptr;
  int ready = 0;
  // Each shell says "ready" once its trap is set; the signal is sent when both have.
  spec.onLine = [&](int rank, Stream, std::string_view line) {
    c.out[rank].emplace_back(line);
    if (line == "ready" && ++ready == 2) launcher->forwardSignal(SIGUSR1);
  };
  spec.onNotice = [&c](const std::string& m) { c.notices.push_back(m); };
  Launcher job(std::move(spec));
  launcher = &job;
  job.start();
  JobResult result = job.wait();
  EXPECT_EQ(result.exitCode, 0);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(c.out[r], (std::vector<std::string>{"ready", "got-usr1"})) << r;
  ASSERT_FALSE(c.notices.empty());
  EXPECT_EQ(c.notices[0], "forwarding SIGUSR1 to 2 rank(s)");
}

TEST(ExitStatus, DescribesExitsAndSignals) {
  EXPECT_EQ(describeWaitStatus(2 << 8), "exited with status 2");
  EXPECT_EQ(exitCodeOf(2 << 8), 2);
  EXPECT_EQ(describeWaitStatus(SIGKILL), "killed by signal 9 (SIGKILL)");
  EXPECT_EQ(exitCodeOf(SIGKILL), 137);
  EXPECT_FALSE(failed(0));
  EXPECT_TRUE(failed(SIGTERM));
}

}  // namespace
}  // namespace chorus::launcher
