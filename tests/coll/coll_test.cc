// Every collective, type, op, count, placement and root, at several rank counts, with ranks as threads of
// one process (chorusCommInitAll), as processes (chorusCommInitFromEnv, shared memory), and as processes on
// two simulated hosts (TCP). Tests named *Full* run the whole sweep (label "sweep"); *Wide* the quick subset
// at many processes (label "sweep"); the others the quick subset (label "cpu").
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>

#include "base/shared_alloc.h"
#include "coll/sweep.h"
#include "common/child.h"
#include "transport/cma.h"

namespace chorus::test {
namespace {

// The child's arguments: "full" (else the quick subset), then optionally "shared-both", "shared-one" (buffers from
// chorusMemAlloc, sharedBuffersSweep's), "large" (largeSweep), "shared-large" (largeSweep from chorusMemAlloc
// buffers: the mapped path by default) or "streamed" (streamedSweep).
SweepConfig configFor(const std::vector<std::string>& args) {
  SweepConfig cfg = !args.empty() && args[0] == "full" ? fullSweep() : quickSweep();
  const std::string shared = args.size() > 1 ? args[1] : "";
  if (shared == "shared-both" || shared == "shared-one") {
    cfg = sharedBuffersSweep();
    cfg.shared = shared == "shared-both" ? SharedBuffers::kBoth : SharedBuffers::kOne;
  } else if (shared == "large" || shared == "shared-large") {
    cfg = largeSweep();
    if (shared == "shared-large") cfg.shared = SharedBuffers::kBoth;
  } else if (shared == "streamed") {
    cfg = streamedSweep();
  }
  return cfg;
}

// One rank of a multi-process sweep.
const bool kChild = registerChild("sweep", [](int rank, int, const std::vector<std::string>& args) {
  chorusComm_t comm = nullptr;
  chorusResult_t rc = chorusCommInitFromEnv(&comm, nullptr);
  if (rc != chorusSuccess) {
    fprintf(stderr, "rank %d: init failed: %s\n", rank, chorusGetLastError(nullptr));
    return 2;
  }
  const SweepConfig cfg = configFor(args);
  std::vector<std::string> failures = runSweep(comm, cfg);
  // Buffers from chorusMemAlloc must have been read through mappings (base/shared_alloc.h), not only through the slots.
  int nranks = 1;
  chorusCommCount(comm, &nranks);
  if (cfg.shared != SharedBuffers::kNone && nranks > 1 && peerAllocReads() == 0) {
    failures.push_back("no peer's chorusMemAlloc buffer was read through a mapping");
  }
  // ... and references to memory the peer does not map (the heap buffer of a case with one shared) are not taken:
  // they would be read by CMA, which only CHORUS_CMA_MIN_BYTES asks for.
  if (cfg.shared != SharedBuffers::kNone && getenv("CHORUS_CMA_MIN_BYTES") == nullptr && transport::cmaReads() != 0) {
    failures.push_back(std::to_string(transport::cmaReads()) + " references were read by CMA");
  }
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

void runProcesses(int n, int hosts, bool full, const std::map<std::string, std::string>& env = {},
                  const std::string& shared = "") {
  ChildOptions opt;
  opt.hosts = hosts;
  opt.env = env;
  opt.timeoutSec = full ? 1500 : 300;
  opt.args = {full ? "full" : "quick", shared};
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

// Buffers from chorusMemAlloc, which the peers on the host map: broadcast and all-gather out of place send references
// to them that the receivers read through the mapping, one copy (tuning.h useMappedRefs; the point-to-point
// collectives decide in p2p_engine.cc); all-reduce runs on them unchanged. With CHORUS_MAPPED_MIN_BYTES=4 every case
// of 4 bytes or more is eligible, both buffers or one of them mapped (at 3 and 5 ranks, ring ranks forward references
// to their outputs); the child fails unless some read went through a mapping. AsMeasured: the default threshold, on
// counts above it.
const std::map<std::string, std::string> kMappedAlways = {{"CHORUS_MAPPED_MIN_BYTES", "4"}};

class CollProcsSharedBuffers : public ::testing::TestWithParam<int> {};
TEST_P(CollProcsSharedBuffers, Both) {
  runProcesses(GetParam(), 1, false, kMappedAlways, "shared-both");
}
TEST_P(CollProcsSharedBuffers, OneOfTwo) {
  runProcesses(GetParam(), 1, false, kMappedAlways, "shared-one");
}
TEST_P(CollProcsSharedBuffers, AsMeasured) {
  runProcesses(GetParam(), 1, false, {}, "shared-large");
}
INSTANTIATE_TEST_SUITE_P(Ranks, CollProcsSharedBuffers, ::testing::Values(2, 3));

class CollProcsSharedBuffersWide : public ::testing::TestWithParam<int> {};
TEST_P(CollProcsSharedBuffersWide, OneOfTwo) {
  runProcesses(GetParam(), 1, false, kMappedAlways, "shared-one");
}
INSTANTIATE_TEST_SUITE_P(Ranks, CollProcsSharedBuffersWide, ::testing::Values(5));

// CHORUS_CHUNKSIZE above half a FIFO (2 MiB on 1 MiB of slots): the tuner holds chunks to half a FIFO, as every rank
// of a ring sends a chunk before it receives one; before, 2 processes waited for each other until the deadline.
TEST(CollProcsChunkAboveFifo, Completes) {
  runProcesses(2, 1, false, {{"CHORUS_CHUNKSIZE", "2097152"}, {"CHORUS_TIMEOUT_MS", "60000"}}, "large");
}

// Outputs of 16 MiB and more, written with streaming stores: at 3 ranks the rings also forward what they store.
class CollProcsStreamedOutput : public ::testing::TestWithParam<int> {};
TEST_P(CollProcsStreamedOutput, Large) {
  runProcesses(GetParam(), 1, false, {}, "streamed");
}
INSTANTIATE_TEST_SUITE_P(Ranks, CollProcsStreamedOutput, ::testing::Values(2, 3));

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

// Both trees of the double binary tree, one after the other: a host tree walks only one below 4 MiB unless asked.
TEST(CollForcedAlgo, BothTrees) {
  setenv("CHORUS_ALGO", "tree", 1);
  setenv("CHORUS_MIN_CTAS", "2", 1);
  runThreads(5, quickSweep());
  unsetenv("CHORUS_MIN_CTAS");
  unsetenv("CHORUS_ALGO");
}
TEST(CollSimHostsFull, Full) {
  runProcesses(5, 2, true);
}

}  // namespace
}  // namespace chorus::test

CHORUS_TEST_MAIN()
