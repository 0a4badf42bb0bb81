// One rank of the network-namespace tests (netns_test.sh starts one per namespace). It joins through
// chorusCommInitFromEnv over the veth link, runs every collective on a few sizes and checks every element.
// With `--fault wait` it waits in an all-reduce that its peer never finishes and prints how it ended; with
// `--fault loop` it runs 64 MiB all-reduces until one fails (a link taken down) and prints how it ended. With
// `--farewell N` it adds N rounds of a broadcast whose root closes its communicator at once (farewellRounds).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "chorus/chorus.h"

namespace {

int check(bool ok, const char* what, int rank) {
  if (!ok) fprintf(stderr, "rank %d: WRONG %s\n", rank, what);
  return ok ? 0 : 1;
}

// A call that failed is reported as the error it is (a failed collective leaves its output unwritten, which
// must not read as wrong data).
int called(chorusResult_t rc, const char* what, int rank, chorusComm_t comm) {
  if (rc != chorusSuccess)
    fprintf(stderr, "rank %d: %s FAILED: %s: %s\n", rank, what, chorusGetErrorString(rc), chorusGetLastError(comm));
  return rc == chorusSuccess ? 0 : 1;
}

// Closing right after the last message (the ucx plugin's goodbye, docs/networks.md): in each round a child
// communicator broadcasts 4 MiB from the last rank, which destroys it as soon as its sends completed, while
// the others may still be receiving over a slow link; what they receive must be whole, and no error. Whether
// the close overtakes the data depends on timing, hence the rounds.
int farewellRounds(chorusComm_t comm, int rank, int n, int rounds) {
  int wrong = 0;
  for (int round = 0; round < rounds; ++round) {
    chorusComm_t child = nullptr;
    if (called(chorusCommSplit(comm, 0, rank, &child, nullptr), "CommSplit", rank, comm) != 0) return wrong + 1;
    const size_t count = size_t(1) << 20;
    const int32_t want = 1000 + round;
    std::vector<int32_t> b(count, rank == n - 1 ? want : 0);
    wrong += called(chorusBroadcast(b.data(), b.data(), count, chorusInt32, n - 1, child, nullptr),
                    "Broadcast before a close", rank, child);
    size_t bad = 0;
    for (int32_t v : b) bad += v != want;
    if (bad != 0) fprintf(stderr, "rank %d: round %d: %zu of %zu elements wrong\n", rank, round, bad, count);
    wrong += check(bad == 0, "Broadcast before a close", rank);
    wrong += called(chorusCommDestroy(child), "CommDestroy (child)", rank, nullptr);
    // Line the ranks up on the parent before the next round.
    int32_t one = 1, all = 0;
    wrong += called(chorusAllReduce(&one, &all, 1, chorusInt32, chorusSum, comm, nullptr), "AllReduce", rank, comm);
    wrong += check(all == n, "AllReduce between rounds", rank);
  }
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  std::string fault = argc >= 3 && strcmp(argv[1], "--fault") == 0 ? argv[2] : "";
  const int farewell = argc >= 3 && strcmp(argv[1], "--farewell") == 0 ? atoi(argv[2]) : 0;
  if (farewell > 0) fault.clear();
  chorusComm_t comm;
  if (chorusCommInitFromEnv(&comm, nullptr) != chorusSuccess) {
    fprintf(stderr, "init failed: %s\n", chorusGetLastError(nullptr));
    return 2;
  }
  int rank = 0, n = 0;
  chorusCommUserRank(comm, &rank);
  chorusCommCount(comm, &n);
  if (fault == "loop") {
    // Both ranks loop over 64 MiB all-reduces until one fails (the test takes a link down mid-collective).
    std::vector<float> buf(1 << 24, 1.0f);
    printf("rank %d looping\n", rank);
    fflush(stdout);
    auto start = std::chrono::steady_clock::now();
    chorusResult_t rc = chorusSuccess;
    int rounds = 0;
    while (rc == chorusSuccess && rounds < 100000) {
      rc = chorusAllReduce(buf.data(), buf.data(), buf.size(), chorusFloat32, chorusMax, comm, nullptr);
      ++rounds;
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    printf("rank %d: %s after %d rounds, %.1f s: %s\n", rank, chorusGetErrorString(rc), rounds, s,
           chorusGetLastError(comm));
    chorusCommAbort(comm);
    return rc == chorusRemoteError ? 10 : rc == chorusTimeout ? 11 : 12;
  }
  if (!fault.empty()) {
    // Rank 1 leaves the all-reduce to the test (it is killed, stopped or cut off); rank 0 reports.
    std::vector<float> buf(1 << 24, 1.0f);
    if (rank == 1) {
      // Never joins: the test kills this process or cuts its link while rank 0 waits.
      printf("rank 1 ready\n");
      fflush(stdout);
      for (;;) pause();
    }
    auto start = std::chrono::steady_clock::now();
    chorusResult_t rc = chorusAllReduce(buf.data(), buf.data(), buf.size(), chorusFloat32, chorusSum, comm, nullptr);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    printf("rank 0: %s after %.1f s: %s\n", chorusGetErrorString(rc), s, chorusGetLastError(comm));
    chorusCommAbort(comm);
    return rc == chorusSuccess ? 1 : (rc == chorusRemoteError ? 10 : rc == chorusTimeout ? 11 : 12);
  }
  int wrong = 0;
  for (size_t count : {size_t(1), size_t(4099), size_t(1 << 20)}) {
    std::vector<double> in(count), out(count);
    for (size_t i = 0; i < count; ++i) in[i] = rank + 1.0 + static_cast<double>(i % 7);
    wrong += called(chorusAllReduce(in.data(), out.data(), count, chorusFloat64, chorusSum, comm, nullptr), "AllReduce",
                    rank, comm);
    bool ok = true;
    for (size_t i = 0; i < count; ++i) ok &= out[i] == n * (n + 1) / 2.0 + n * static_cast<double>(i % 7);
    wrong += check(ok, "AllReduce", rank);
    std::vector<int32_t> g(count * n), mine(count, rank);
    wrong += called(chorusAllGather(mine.data(), g.data(), count, chorusInt32, comm, nullptr), "AllGather", rank, comm);
    ok = true;
    for (size_t i = 0; i < g.size(); ++i) ok &= g[i] == static_cast<int32_t>(i / count);
    wrong += check(ok, "AllGather", rank);
    std::vector<int32_t> b(count, rank == n - 1 ? 42 : 0);
    wrong +=
        called(chorusBroadcast(b.data(), b.data(), count, chorusInt32, n - 1, comm, nullptr), "Broadcast", rank, comm);
    ok = true;
    for (int32_t v : b) ok &= v == 42;
    wrong += check(ok, "Broadcast", rank);
  }
  wrong += farewellRounds(comm, rank, n, farewell);
  wrong += called(chorusCommFinalize(comm), "CommFinalize", rank, comm);
  wrong += called(chorusCommDestroy(comm), "CommDestroy", rank, nullptr);
  printf("rank %d: %s\n", rank, wrong == 0 ? "all correct" : "WRONG RESULTS");
  return wrong == 0 ? 0 : 1;
}
