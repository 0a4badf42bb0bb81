// Every collective, type, op, count, placement and root, at several rank counts, with ranks as threads of
// one process (chorusCommInitAll), as processes (chorusCommInitFromEnv, shared memory), and as processes on
// two simulated hosts (TCP). Tests named *Full* run the whole sweep (label "sweep"); *Wide* the quick subset
// at many processes (label "sweep"); the others the quick subset (label "cpu").
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>

#include "coll/sweep.h"
#include "common/child.h"

namespace chorus::test {
namespace {

SweepConfig configFor(const std::vector<std::string>& args) {
  return !args.empty() && args[0] == "full" ? fullSweep() : quickSweep();
}

// One rank of a multi-process sweep.
const bool kChild = registerChild("sweep", [](int rank, int, const std::vector<std::string>& args) {
  chorusComm_t comm = nullptr;
  chorusResult_t rc = chorusCommInitFromEnv(&comm, nullptr);
  if (rc != chorusSuccess) {
    fprintf(stderr, "rank %d: init failed: %s\n", rank, chorusGetLastError(nullptr));
    return 2;
  }
  std::vector<std::string> failures = runSweep(comm, configFor(args));
  for (const auto& f : failures) fprintf(stderr, "FAIL %s\n", f.c_str());
  chorusCommFinalize(comm);
  chorusCommDestroy(comm);
  return failures.empty() ? 0 : 1;
});

void runThreads(int n, const SweepConfig& cfg) {
  std::vector<chorusComm_t> comms(n);
  ASSERT_EQ(chorusCommInitAll(comms.data(), n, nullptr), chorusSuccess) << chorusGetLastError(nullptr);
  std::vector<std::vector<std::string>> failures(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { failures[r] = runSweep(comms[r], cfg); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    for (const auto& f : failures[r]) ADD_FAILURE() << f;
    EXPECT_EQ(chorusCommFinalize(comms[r]), chorusSuccess);
    EXPECT_EQ(chorusCommDestroy(comms[r]), chorusSuccess);
  }
}

void runProcesses(int n, int hosts, bool full, const std::map<std::string, std::string>& env = {}) {
  ChildOptions opt;
  opt.hosts = hosts;
  opt.env = env;
  opt.timeoutSec = full ? 1500 : 300;
  if (full) opt.args = {"full"};
  auto results = runChildren("sweep", n, opt);
  ASSERT_EQ(results.size(), static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) EXPECT_EQ(results[r].exitCode, 0) << "rank " << r << " (pid " << results[r].pid << ")";
}

class CollThreads : public ::testing::TestWithParam<int> {};
TEST_P(CollThreads, Quick) {
  runThreads(GetParam(), quickSweep());
}
INSTANTIATE_TEST_SUITE_P(Ranks, CollThreads, ::testing::Values(1, 2, 3, 5));

class CollThreadsFull : public ::testing::TestWithParam<int> {};
TEST_P(CollThreadsFull, Full) {
  runThreads(GetParam(), fullSweep());
}
INSTANTIATE_TEST_SUITE_P(Ranks, CollThreadsFull, ::testing::Values(1, 2, 3, 5, 8));

class CollProcs : public ::testing::TestWithParam<int> {};
TEST_P(CollProcs, Quick) {
  runProcesses(GetParam(), 1, false);
}
INSTANTIATE_TEST_SUITE_P(Ranks, CollProcs, ::testing::Values(2, 3));

// The full sweep as processes (label sweep). At 5 and 8 processes it once took 13 minutes of CI on two cores and
// ran as the quick subset only; the checks it spent them on are compiled per type now (common/test_data.h).
class CollProcsFull : public ::testing::TestWithParam<int> {};
TEST_P(CollProcsFull, Full) {
  runProcesses(GetParam(), 1, true);
}
INSTANTIATE_TEST_SUITE_P(Ranks, CollProcsFull, ::testing::Values(2, 3, 5, 8));

// Single copy between processes (the receiver reads the sender's buffer, transport/cma.h) for every collective
// of any size (CHORUS_CMA_MIN_BYTES=1), so that every collective x type x count goes through it (point-to-point
// transfers only beyond the FIFO's 1 MiB); and the quick sweep with it forced off (CHORUS_CMA_DISABLE=1: every
// byte through the FIFO slots). By default (CHORUS_CMA_MIN_BYTES=0) nothing goes by reference, so the full sweep
// of CollProcsFull is the full sweep without it.
const std::map<std::string, std::string> kSingleCopyAlways = {{"CHORUS_CMA_MIN_BYTES", "1"}};
const std::map<std::string, std::string> kSingleCopyOff = {{"CHORUS_CMA_MIN_BYTES", "1"}, {"CHORUS_CMA_DISABLE", "1"}};

class CollProcsSingleCopy : public ::testing::TestWithParam<int> {};
TEST_P(CollProcsSingleCopy, Quick) {
  runProcesses(GetParam(), 1, false, kSingleCopyAlways);
}
TEST_P(CollProcsSingleCopy, QuickCmaDisabled) {
  runProcesses(GetParam(), 1, false, kSingleCopyOff);
}
INSTANTIATE_TEST_SUITE_P(Ranks, CollProcsSingleCopy, ::testing::Values(2, 3));

class CollProcsSingleCopyFull : public ::testing::TestWithParam<int> {};
TEST_P(CollProcsSingleCopyFull, Full) {
  runProcesses(GetParam(), 1, true, kSingleCopyAlways);
}
INSTANTIATE_TEST_SUITE_P(Ranks, CollProcsSingleCopyFull, ::testing::Values(2, 3));

class CollProcsSingleCopyWide : public ::testing::TestWithParam<int> {};
TEST_P(CollProcsSingleCopyWide, Quick) {
  runProcesses(GetParam(), 1, false, kSingleCopyAlways);
}
INSTANTIATE_TEST_SUITE_P(Ranks, CollProcsSingleCopyWide, ::testing::Values(5, 8));

TEST(CollSimHosts, Quick) {
  runProcesses(4, 2, false);
}

// Every algorithm on every collective it implements, whatever the tuning would pick.
class CollForcedAlgo : public ::testing::TestWithParam<const char*> {};
TEST_P(CollForcedAlgo, Quick) {
  setenv("CHORUS_ALGO", GetParam(), 1);
  runThreads(5, quickSweep());
  unsetenv("CHORUS_ALGO");
}
INSTANTIATE_TEST_SUITE_P(Algos, CollForcedAlgo, ::testing::Values("ring", "tree", "direct", "allreduce:tree;ring"));
TEST(CollSimHostsFull, Full) {
  runProcesses(5, 2, true);
}

}  // namespace
}  // namespace chorus::test

CHORUS_TEST_MAIN()
