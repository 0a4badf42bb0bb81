// The survivors' API for elastic training, with real processes: one rank is SIGKILLed in the middle of a
// collective; the others see the error quickly, revoke the communicator, agree on the failed ranks
// (chorusCommGetFailedRanks), shrink to a communicator of the survivors, run every collective on it with every
// element checked, and abort the old communicator promptly.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "chorus/chorus.h"
#include "common/child.h"

namespace chorus::test {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

#define CHILD_CHECK(cond, code, ...)                               \
  do {                                                             \
    if (!(cond)) {                                                 \
      fprintf(stderr, "rank %d: check failed: %s: ", rank, #cond); \
      fprintf(stderr, __VA_ARGS__);                                \
      fprintf(stderr, "\n");                                       \
      return code;                                                 \
    }                                                              \
  } while (0)

// Every collective on a communicator of n ranks, every element checked (float values that sum exactly).
// Returns 0 or the number of the failing collective.
int runEveryCollective(chorusComm_t comm, int rank, int n) {
  const size_t count = 1000;
  std::vector<float> send(count * n), recv(count * n);
  auto value = [](int r, size_t i) { return static_cast<float>((r + 1) * 1000 + static_cast<int>(i % 997)); };
  auto fill = [&](size_t len) {
    for (size_t i = 0; i < len; ++i) send[i] = value(rank, i);
  };
  // all-reduce
  fill(count);
  if (chorusAllReduce(send.data(), recv.data(), count, chorusFloat32, chorusSum, comm, nullptr) != chorusSuccess)
    return 1;
  for (size_t i = 0; i < count; ++i) {
    float want = 0;
    for (int r = 0; r < n; ++r) want += value(r, i);
    if (recv[i] != want) return 2;
  }
  // broadcast from the last rank
  fill(count);
  if (chorusBroadcast(send.data(), recv.data(), count, chorusFloat32, n - 1, comm, nullptr) != chorusSuccess) return 3;
  for (size_t i = 0; i < count; ++i) {
    if (recv[i] != value(n - 1, i)) return 4;
  }
  // reduce (max) to rank 1 % n
  const int root = 1 % n;
  if (chorusReduce(send.data(), recv.data(), count, chorusFloat32, chorusMax, root, comm, nullptr) != chorusSuccess)
    return 5;
  if (rank == root) {
    for (size_t i = 0; i < count; ++i) {
      if (recv[i] != value(n - 1, i)) return 6;
    }
  }
  // all-gather
  if (chorusAllGather(send.data(), recv.data(), count, chorusFloat32, comm, nullptr) != chorusSuccess) return 7;
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < count; ++i) {
      if (recv[r * count + i] != value(r, i)) return 8;
    }
  }
  // reduce-scatter
  fill(count * n);
  if (chorusReduceScatter(send.data(), recv.data(), count, chorusFloat32, chorusSum, comm, nullptr) != chorusSuccess)
    return 9;
  for (size_t i = 0; i < count; ++i) {
    float want = 0;
    for (int r = 0; r < n; ++r) want += value(r, rank * count + i);
    if (recv[i] != want) return 10;
  }
  // all-to-all: block j of rank r goes to rank j
  if (chorusAlltoAll(send.data(), recv.data(), count, chorusFloat32, comm, nullptr) != chorusSuccess) return 11;
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < count; ++i) {
      if (recv[r * count + i] != value(r, rank * count + i)) return 12;
    }
  }
  // gather to rank 0, scatter from rank 0
  if (chorusGather(send.data(), recv.data(), count, chorusFloat32, 0, comm, nullptr) != chorusSuccess) return 13;
  if (rank == 0) {
    for (int r = 0; r < n; ++r) {
      for (size_t i = 0; i < count; ++i) {
        if (recv[r * count + i] != value(r, i)) return 14;
      }
    }
  }
  if (chorusScatter(send.data(), recv.data(), count, chorusFloat32, 0, comm, nullptr) != chorusSuccess) return 15;
  for (size_t i = 0; i < count; ++i) {
    if (recv[i] != value(0, rank * count + i)) return 16;
  }
  // send/recv around the ring
  fill(count);
  chorusGroupStart();
  chorusSend(send.data(), count, chorusFloat32, (rank + 1) % n, comm, nullptr);
  chorusRecv(recv.data(), count, chorusFloat32, (rank + n - 1) % n, comm, nullptr);
  if (chorusGroupEnd() != chorusSuccess) return 17;
  for (size_t i = 0; i < count; ++i) {
    if (recv[i] != value((rank + n - 1) % n, i)) return 18;
  }
  return 0;
}

// args[0]: the rank that dies; args[1]: "kill" (SIGKILL mid-collective) or "exit" (exit(1) mid-collective);
// args[2]: how the survivors free the old communicator, "abort" or "destroy".
const bool kElasticChild = registerChild("elastic", [](int rank, int nranks, const std::vector<std::string>& args) {
  const int victim = std::stoi(args.at(0));
  const std::string how = args.at(1);
  const bool destroy = args.at(2) == "destroy";
  chorusComm_t comm = nullptr;
  CHILD_CHECK(chorusCommInitFromEnv(&comm, nullptr) == chorusSuccess, 2, "%s", chorusGetLastError(nullptr));
  // One correct call first: the connections exist, the failure happens in the data path.
  CHILD_CHECK(runEveryCollective(comm, rank, nranks) == 0, 3, "before the failure");
  // 32 MiB all-reduces, as many as it takes for the victim to die during one: a single one was meant to outlast the
  // victim's 3 ms, but took 3 ms itself on a fast machine and sometimes ended first. The survivors time the one
  // that fails.
  constexpr int kMaxCalls = 1000;
  std::vector<float> big(1 << 23, 1.0f);
  if (rank == victim) {
    chorusStream_t s;
    chorusStreamCreate(&s);
    for (int i = 0; i < kMaxCalls; ++i) {
      chorusAllReduce(big.data(), big.data(), big.size(), chorusFloat32, chorusSum, comm, s);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    if (how == "kill") raise(SIGKILL);
    _exit(1);
  }
  chorusResult_t rc = chorusSuccess;
  double took = 0;
  for (int i = 0; i < kMaxCalls && rc == chorusSuccess; ++i) {
    auto start = Clock::now();
    rc = chorusAllReduce(big.data(), big.data(), big.size(), chorusFloat32, chorusSum, comm, nullptr);
    took = secondsSince(start);
  }
  fprintf(stderr, "rank %d: all-reduce %s after %.3f s: %s\n", rank, chorusGetErrorString(rc), took,
          chorusGetLastError(comm));
  CHILD_CHECK(rc == chorusRemoteError, 10, "all-reduce returned %d", rc);
  CHILD_CHECK(took < 2.0, 11, "took %.3f s", took);

  auto start = Clock::now();
  CHILD_CHECK(chorusCommRevoke(comm, CHORUS_REVOKE_DEFAULT) == chorusSuccess, 12, "%s", chorusGetLastError(comm));
  CHILD_CHECK(chorusAllReduce(big.data(), big.data(), 1, chorusFloat32, chorusSum, comm, nullptr) == chorusInvalidUsage,
              13, "a collective on a revoked communicator must be refused");
  std::vector<int> failed(nranks, -1);
  int nfailed = -1;
  CHILD_CHECK(chorusCommGetFailedRanks(comm, failed.data(), &nfailed) == chorusSuccess, 14, "%s",
              chorusGetLastError(comm));
  CHILD_CHECK(nfailed == 1 && failed[0] == victim, 15, "nfailed %d, failed[0] %d", nfailed, failed[0]);
  double agreeTook = secondsSince(start);
  chorusComm_t shrunk = nullptr;
  start = Clock::now();
  CHILD_CHECK(chorusCommShrink(comm, failed.data(), nfailed, &shrunk, nullptr, CHORUS_SHRINK_DEFAULT) == chorusSuccess,
              16, "%s", chorusGetLastError(comm));
  double shrinkTook = secondsSince(start);
  start = Clock::now();
  CHILD_CHECK((destroy ? chorusCommDestroy(comm) : chorusCommAbort(comm)) == chorusSuccess, 17, "%s",
              chorusGetLastError(nullptr));
  double abortTook = secondsSince(start);
  CHILD_CHECK(abortTook < 1.0, 18, "abort took %.3f s", abortTook);
  int n = 0, me = -1;
  chorusCommCount(shrunk, &n);
  chorusCommUserRank(shrunk, &me);
  CHILD_CHECK(n == nranks - 1 && me == (rank < victim ? rank : rank - 1), 19, "size %d rank %d", n, me);
  int bad = runEveryCollective(shrunk, me, n);
  CHILD_CHECK(bad == 0, 20, "collective %d on the shrunk communicator: %s", bad, chorusGetLastError(shrunk));
  CHILD_CHECK(chorusCommFinalize(shrunk) == chorusSuccess, 21, "%s", chorusGetLastError(shrunk));
  CHILD_CHECK(chorusCommDestroy(shrunk) == chorusSuccess, 22, "%s", chorusGetLastError(nullptr));
  fprintf(stderr, "rank %d: revoke+agree %.3f s, shrink %.3f s, abort %.3f s\n", rank, agreeTook, shrinkTook,
          abortTook);
  return 0;
});

struct ElasticCase {
  int nranks, victim, hosts;
  const char* how;
  const char* free;  // "abort" or "destroy"
};

class ElasticProcs : public ::testing::TestWithParam<ElasticCase> {};

TEST_P(ElasticProcs, SurvivorsRevokeAgreeShrinkAndRunEveryCollective) {
  const ElasticCase c = GetParam();
  ChildOptions opt;
  opt.hosts = c.hosts;
  opt.timeoutSec = 90;
  opt.args = {std::to_string(c.victim), c.how, c.free};
  opt.env["CHORUS_TIMEOUT_MS"] = "30000";
  auto results = runChildren("elastic", c.nranks, opt);
  for (int r = 0; r < c.nranks; ++r) {
    if (r == c.victim) {
      EXPECT_EQ(results[r].exitCode, std::string(c.how) == "kill" ? -SIGKILL : 1);
    } else {
      EXPECT_EQ(results[r].exitCode, 0) << "rank " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ElasticProcs,
    ::testing::Values(ElasticCase{4, 3, 1, "kill", "abort"}, ElasticCase{4, 1, 1, "kill", "destroy"},
                      ElasticCase{4, 2, 2, "kill", "abort"}, ElasticCase{4, 0, 1, "exit", "destroy"},
                      ElasticCase{3, 1, 3, "exit", "destroy"}, ElasticCase{8, 5, 2, "kill", "abort"},
                      ElasticCase{2, 1, 1, "kill", "destroy"}),
    [](const ::testing::TestParamInfo<ElasticCase>& i) {
      return std::string(i.param.how) + std::to_string(i.param.nranks) + "ranks_victim" +
             std::to_string(i.param.victim) + "_hosts" + std::to_string(i.param.hosts) + "_" + i.param.free;
    });

}  // namespace
}  // namespace chorus::test

CHORUS_TEST_MAIN()
