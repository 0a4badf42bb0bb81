// One rank of the network-namespace tests (netns_test.sh starts one per namespace). It joins through
// chorusCommInitFromEnv over the veth link, runs every collective on a few sizes and checks every element.
// With `--fault wait` it waits in an all-reduce that its peer never finishes and prints how it ended; with
// `--fault loop` it runs 64 MiB all-reduces until one fails (a link taken down) and prints how it ended.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "chorus/chorus.h"

namespace {

int check(bool ok, const char* what, int rank) {
  if (!ok) fprintf(stderr, "rank %d: WRONG %s\n", rank, what);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string fault = argc >= 3 && strcmp(argv[1], "--fault") == 0 ? argv[2] : "";
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
    chorusAllReduce(in.data(), out.data(), count, chorusFloat64, chorusSum, comm, nullptr);
    bool ok = true;
    for (size_t i = 0; i < count; ++i) ok &= out[i] == n * (n + 1) / 2.0 + n * static_cast<double>(i % 7);
    wrong += check(ok, "AllReduce", rank);
    std::vector<int32_t> g(count * n), mine(count, rank);
    chorusAllGather(mine.data(), g.data(), count, chorusInt32, comm, nullptr);
    ok = true;
    for (size_t i = 0; i < g.size(); ++i) ok &= g[i] == static_cast<int32_t>(i / count);
    wrong += check(ok, "AllGather", rank);
    std::vector<int32_t> b(count, rank == n - 1 ? 42 : 0);
    chorusBroadcast(b.data(), b.data(), count, chorusInt32, n - 1, comm, nullptr);
    ok = true;
    for (int32_t v : b) ok &= v == 42;
    wrong += check(ok, "Broadcast", rank);
  }
  chorusCommFinalize(comm);
  chorusCommDestroy(comm);
  printf("rank %d: %s\n", rank, wrong == 0 ? "all correct" : "WRONG RESULTS");
  return wrong == 0 ? 0 : 1;
}
