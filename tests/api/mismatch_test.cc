// Issue 13 item 5: ranks that call mismatched collectives without CHORUS_CHECK get an error on every rank that
// receives from a mismatched peer, never a silent wrong result: every FIFO slot carries the operation's
// sequence number and signature.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "chorus/chorus.h"

namespace {

struct Outcome {
  chorusResult_t rc = chorusSuccess;
  std::string msg;
};

// Runs call(rank, comm) on one thread per rank of a fresh communicator (InitAll, or with `config` ranks made by
// chorusCommInitRankConfig on threads); aborts it afterwards.
std::vector<Outcome> onRanks(int n, const std::function<chorusResult_t(int, chorusComm_t)>& call,
                             const chorusConfig_t* config = nullptr) {
  setenv("CHORUS_TIMEOUT_MS", "3000", 1);
  std::vector<chorusComm_t> comms(n);
  if (config == nullptr) {
    EXPECT_EQ(chorusCommInitAll(comms.data(), n, nullptr), chorusSuccess);
  } else {
    chorusUniqueId id;
    EXPECT_EQ(chorusGetUniqueId(&id), chorusSuccess);
    std::vector<std::thread> init;
    for (int r = 0; r < n; ++r) {
      init.emplace_back([&, r] {
        chorusConfig_t c = *config;
        EXPECT_EQ(chorusCommInitRankConfig(&comms[r], n, id, r, &c), chorusSuccess);
      });
    }
    for (auto& t : init) t.join();
  }
  std::vector<Outcome> out(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      out[r].rc = call(r, comms[r]);
      out[r].msg = chorusGetLastError(comms[r]);
    });
  }
  for (auto& t : threads) t.join();
  for (auto c : comms) chorusCommAbort(c);
  unsetenv("CHORUS_TIMEOUT_MS");
  return out;
}

void expectEveryRankFails(const std::vector<Outcome>& out, const char* mentions) {
  for (size_t r = 0; r < out.size(); ++r) {
    EXPECT_EQ(out[r].rc, chorusRemoteError) << "rank " << r << ": " << out[r].msg;
    fprintf(stderr, "rank %zu: %s\n", r, out[r].msg.c_str());
  }
  bool named = false;
  for (const Outcome& o : out) named = named || o.msg.find(mentions) != std::string::npos;
  EXPECT_TRUE(named) << "no rank's message mentions " << mentions;
}

class Mismatch : public ::testing::TestWithParam<int> {};

TEST_P(Mismatch, SameBytesDifferentTypes) {
  const int n = GetParam();
  const size_t count = 100000;
  auto out = onRanks(n, [&](int rank, chorusComm_t comm) {
    std::vector<float> buf(count, 1.0f);
    // Rank 0 reduces int32, the others float32: the same bytes on the wire.
    return chorusAllReduce(buf.data(), buf.data(), count, rank == 0 ? chorusInt32 : chorusFloat32, chorusSum, comm,
                           nullptr);
  });
  expectEveryRankFails(out, "int32");
}

TEST_P(Mismatch, DifferentOperations) {
  const int n = GetParam();
  auto out = onRanks(n, [&](int rank, chorusComm_t comm) {
    std::vector<float> buf(4096, 1.0f + rank);
    return chorusAllReduce(buf.data(), buf.data(), buf.size(), chorusFloat32, rank == 1 ? chorusMax : chorusSum, comm,
                           nullptr);
  });
  expectEveryRankFails(out, "max");
}

TEST_P(Mismatch, DifferentCollectivesOfTheSameSize) {
  const int n = GetParam();
  auto out = onRanks(n, [&](int rank, chorusComm_t comm) {
    std::vector<float> buf(4096 * n, 1.0f);
    if (rank == n - 1) return chorusBroadcast(buf.data(), buf.data(), 4096, chorusFloat32, 0, comm, nullptr);
    return chorusReduce(buf.data(), buf.data(), 4096, chorusFloat32, chorusSum, 0, comm, nullptr);
  });
  // Ranks that only pass data on (the middle of the reduce chain) finish their part, which has no output; the
  // reduce's root and the broadcasting rank, which receive from a mismatched peer, fail (chorusRemoteError), or,
  // when two ranks only wait for each other (2 ranks), end at the deadline.
  for (int r : {0, n - 1}) {
    EXPECT_TRUE(out[r].rc == chorusRemoteError || out[r].rc == chorusTimeout) << "rank " << r << ": " << out[r].rc;
  }
  for (size_t r = 0; r < out.size(); ++r) fprintf(stderr, "rank %zu: %d %s\n", r, out[r].rc, out[r].msg.c_str());
}

// A broadcast whose ranks disagree on the root: no rank may return a result that is not the root's data it
// believes in; the call after it must not silently consume the stale slots either (with 2 ranks both are roots
// and only send: their next call finds the other's broadcast slots, call #0, where it expects call #1).
TEST_P(Mismatch, BroadcastWithDifferentRootsNeverCorruptsSilently) {
  const int n = GetParam();
  const size_t count = 8192;
  auto out = onRanks(n, [&](int rank, chorusComm_t comm) {
    std::vector<float> buf(count, static_cast<float>(rank + 1));
    const int root = rank == 1 ? 1 : 0;
    chorusResult_t rc = chorusBroadcast(buf.data(), buf.data(), count, chorusFloat32, root, comm, nullptr);
    if (rc != chorusSuccess) return rc;
    for (float v : buf) {
      if (v != static_cast<float>(root + 1)) return chorusInternalError;  // a silent wrong result
    }
    // The next, correct, call: it must give the right sum or an error, never a wrong sum.
    std::vector<float> x(count, 1.0f);
    rc = chorusAllReduce(x.data(), x.data(), count, chorusFloat32, chorusSum, comm, nullptr);
    if (rc != chorusSuccess) return rc;
    for (float v : x) {
      if (v != static_cast<float>(n)) return chorusInternalError;
    }
    return chorusSuccess;
  });
  int errors = 0;
  for (size_t r = 0; r < out.size(); ++r) {
    EXPECT_NE(out[r].rc, chorusInternalError) << "rank " << r << " returned a wrong result without an error";
    errors += out[r].rc != chorusSuccess ? 1 : 0;
    fprintf(stderr, "rank %zu: %d %s\n", r, out[r].rc, out[r].msg.c_str());
  }
  EXPECT_GT(errors, 0);
}

// Issue 13 item 4: a count mismatch without CHORUS_CHECK is found in the data path, where some data already
// moved: an error that says the communicator is not usable any more (never chorusInvalidUsage, which promises a
// usable communicator) on every rank, and never a wrong result. With one slot per message (direct) every rank
// receives a mismatched slot: chorusRemoteError. With a large count the ranks may tune differently (one channel
// or two) and then wait for connections the others never make: the deadline ends it (chorusTimeout), or a
// peer's notice (chorusRemoteError).
TEST_P(Mismatch, DifferentCountsFailEveryRankAndNeverGiveAWrongResult) {
  const int n = GetParam();
  for (size_t count : {size_t{1000}, size_t{1} << 20}) {
    auto out = onRanks(n, [&](int rank, chorusComm_t comm) {
      const size_t mine = rank == 0 ? count - 24 : count;
      std::vector<float> buf(mine, 1.0f);
      chorusResult_t rc = chorusAllReduce(buf.data(), buf.data(), mine, chorusFloat32, chorusSum, comm, nullptr);
      if (rc != chorusSuccess) return rc;
      for (float v : buf) {
        if (v != static_cast<float>(n)) return chorusInternalError;  // a silent wrong result
      }
      return chorusSuccess;
    });
    for (size_t r = 0; r < out.size(); ++r) {
      if (count == 1000) {
        EXPECT_EQ(out[r].rc, chorusRemoteError) << "count " << count << ", rank " << r << ": " << out[r].msg;
      } else {
        EXPECT_TRUE(out[r].rc == chorusRemoteError || out[r].rc == chorusTimeout)
            << "count " << count << ", rank " << r << ": " << out[r].rc << " " << out[r].msg;
      }
    }
  }
}

// CHORUS_CHECK (config.checkMode) compares the calls before any data moves: every rank gets chorusInvalidUsage
// with a message naming both calls, and the communicator stays usable, as the header promises.
TEST_P(Mismatch, CheckModeNamesBothCallsAndTheCommunicatorStaysUsable) {
  const int n = GetParam();
  chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
  config.checkMode = 1;
  auto out = onRanks(
      n,
      [&](int rank, chorusComm_t comm) {
        std::vector<float> buf(4096, 1.0f);
        const size_t count = rank == n - 1 ? 4000 : 4096;
        chorusResult_t rc = chorusAllReduce(buf.data(), buf.data(), count, chorusFloat32, chorusSum, comm, nullptr);
        if (rc != chorusInvalidUsage) return rc == chorusSuccess ? chorusInternalError : rc;
        const std::string msg = chorusGetLastError(comm);
        if (msg.find("count 4000") == std::string::npos || msg.find("count 4096") == std::string::npos) {
          fprintf(stderr, "rank %d: the message does not name both counts: %s\n", rank, msg.c_str());
          return chorusInternalError;
        }
        // The next, matching, call works and gives the right sum.
        std::fill(buf.begin(), buf.end(), 1.0f);
        rc = chorusAllReduce(buf.data(), buf.data(), buf.size(), chorusFloat32, chorusSum, comm, nullptr);
        if (rc != chorusSuccess) return rc;
        for (float v : buf) {
          if (v != static_cast<float>(n)) return chorusInternalError;
        }
        return chorusSuccess;
      },
      &config);
  for (size_t r = 0; r < out.size(); ++r) EXPECT_EQ(out[r].rc, chorusSuccess) << "rank " << r << ": " << out[r].msg;
}

INSTANTIATE_TEST_SUITE_P(Ranks, Mismatch, ::testing::Values(2, 3, 5));

}  // namespace
