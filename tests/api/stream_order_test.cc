// A communicator's operations run in the order they were issued, whichever streams carry them (host streams and the
// NULL stream), as NCCL orders a communicator's kernels: two at once would share its connections and interleave their
// data. Before the tickets (core/comm.h: Comm::takeTicket), a send on a host stream followed by a blocking send to
// the same peer arrived second in 19,998 of 20,000 tries at 8 floats, and at 64 Ki floats the two transfers' slots
// mixed in one receive buffer and the connection failed.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "chorus/chorus.h"
#include "common/on_threads.h"
#include "common/thread_comms.h"

namespace chorus::test {
namespace {

using Clock = std::chrono::steady_clock;

// n ranks as threads whose waits give up after 20 s unless `config` says otherwise: operations run at once on one
// connection can leave a receive waiting for ever, and the test should then fail, not hang.
std::vector<chorusComm_t> initBounded(int n, chorusConfig_t* config = nullptr) {
  chorusConfig_t bounded = CHORUS_CONFIG_INITIALIZER;
  bounded.timeoutMs = 20000;
  return initThreads(n, config != nullptr ? config : &bounded);
}

// The first element of `v` that is not `want` (its index), or -1.
int firstWrong(const std::vector<float>& v, float want) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != want) return static_cast<int>(i);
  }
  return -1;
}

// Destroys the communicators, or aborts them where a rank failed (its peers may be left waiting on it).
void finish(const std::vector<chorusComm_t>& comms, const std::vector<std::string>& failures) {
  bool failed = false;
  for (const std::string& f : failures) failed = failed || !f.empty();
  for (chorusComm_t c : comms) {
    if (failed) {
      chorusCommAbort(c);
    } else {
      EXPECT_EQ(chorusCommDestroy(c), chorusSuccess) << chorusGetLastError(c);
    }
  }
}

// Rank 0 sends A on a host stream, then B on the NULL stream, to rank 1, which receives both blocking: A must land
// in the first receive and B in the second, every element, at sizes that travel in a mailbox line, in slots, and in
// many slots.
class StreamOrder : public ::testing::TestWithParam<size_t> {};

TEST_P(StreamOrder, SendsOnAStreamAndTheNullStreamArriveInIssueOrder) {
  const size_t count = GetParam();
  const int iters = count <= 64 ? 500 : count <= 65536 ? 50 : 8;
  std::vector<chorusComm_t> comms = initBounded(2);
  std::vector<std::string> failures(2);
  onThreads(2, [&](int r) {
    chorusStream_t s = nullptr;
    ASSERT_EQ(chorusStreamCreate(&s), chorusSuccess);
    std::vector<float> a(count), b(count), x(count), y(count);
    for (int it = 0; it < iters && failures[r].empty(); ++it) {
      const float wantA = static_cast<float>(it * 2 + 1), wantB = static_cast<float>(it * 2 + 2);
      if (r == 0) {
        std::fill(a.begin(), a.end(), wantA);
        std::fill(b.begin(), b.end(), wantB);
        chorusResult_t sa = chorusSend(a.data(), count, chorusFloat32, 1, comms[0], s);
        chorusResult_t sb = chorusSend(b.data(), count, chorusFloat32, 1, comms[0], nullptr);
        chorusResult_t sync = chorusStreamSynchronize(s);
        if (sa != chorusSuccess || sb != chorusSuccess || sync != chorusSuccess) {
          failures[0] = "send failed: " + std::string(chorusGetLastError(comms[0]));
        }
      } else {
        chorusResult_t rx = chorusRecv(x.data(), count, chorusFloat32, 0, comms[1], nullptr);
        chorusResult_t ry = chorusRecv(y.data(), count, chorusFloat32, 0, comms[1], nullptr);
        if (rx != chorusSuccess || ry != chorusSuccess) {
          failures[1] = "recv failed: " + std::string(chorusGetLastError(comms[1]));
        } else if (int i = firstWrong(x, wantA); i >= 0) {
          failures[1] = "iteration " + std::to_string(it) + ": first receive [" + std::to_string(i) +
                        "] = " + std::to_string(x[i]) + ", expected " + std::to_string(wantA);
        } else if (int j = firstWrong(y, wantB); j >= 0) {
          failures[1] = "iteration " + std::to_string(it) + ": second receive [" + std::to_string(j) +
                        "] = " + std::to_string(y[j]) + ", expected " + std::to_string(wantB);
        }
      }
    }
    EXPECT_EQ(chorusStreamDestroy(s), chorusSuccess);
  });
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
  finish(comms, failures);
}

INSTANTIATE_TEST_SUITE_P(Counts, StreamOrder, ::testing::Values(size_t{8}, size_t{65536}, size_t{1} << 20));

// Both ranks spread their operations over two host streams: rank 0 sends A on S1 and B on S2, rank 1 receives the
// first on its T1 and the second on its T2. Issue order, not the streams, decides which receive gets which send.
TEST(StreamOrderTwoStreams, SendsAndReceivesOnTwoStreamsPairInIssueOrder) {
  constexpr size_t kCount = 65536;
  std::vector<chorusComm_t> comms = initBounded(2);
  std::vector<std::string> failures(2);
  onThreads(2, [&](int r) {
    chorusStream_t s1 = nullptr, s2 = nullptr;
    ASSERT_EQ(chorusStreamCreate(&s1), chorusSuccess);
    ASSERT_EQ(chorusStreamCreate(&s2), chorusSuccess);
    std::vector<float> first(kCount), second(kCount);
    for (int it = 0; it < 20 && failures[r].empty(); ++it) {
      const float wantA = static_cast<float>(it * 2 + 1), wantB = static_cast<float>(it * 2 + 2);
      if (r == 0) {
        std::fill(first.begin(), first.end(), wantA);
        std::fill(second.begin(), second.end(), wantB);
        chorusSend(first.data(), kCount, chorusFloat32, 1, comms[0], s1);
        chorusSend(second.data(), kCount, chorusFloat32, 1, comms[0], s2);
      } else {
        chorusRecv(first.data(), kCount, chorusFloat32, 0, comms[1], s1);
        chorusRecv(second.data(), kCount, chorusFloat32, 0, comms[1], s2);
      }
      if (chorusStreamSynchronize(s1) != chorusSuccess || chorusStreamSynchronize(s2) != chorusSuccess) {
        failures[r] = "rank " + std::to_string(r) + ": " + chorusGetLastError(comms[r]);
      } else if (r == 1) {
        if (int i = firstWrong(first, wantA); i >= 0) {
          failures[1] = "iteration " + std::to_string(it) + ": first receive [" + std::to_string(i) +
                        "] = " + std::to_string(first[i]);
        } else if (int j = firstWrong(second, wantB); j >= 0) {
          failures[1] = "iteration " + std::to_string(it) + ": second receive [" + std::to_string(j) +
                        "] = " + std::to_string(second[j]);
        }
      }
    }
    EXPECT_EQ(chorusStreamDestroy(s1), chorusSuccess);
    EXPECT_EQ(chorusStreamDestroy(s2), chorusSuccess);
  });
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
  finish(comms, failures);
}

// Collectives too: 3 ranks each issue an all-reduce on S1, another on S2 and a third on the NULL stream, each of its
// own buffer. Run at once, the three would share the ring's connections; in issue order each sums its own values.
TEST(StreamOrderTwoStreams, CollectivesOnTwoStreamsAndTheNullStreamRunInIssueOrder) {
  constexpr int kRanks = 3;
  constexpr size_t kCount = 300000;  // 1.2 MiB per buffer: many slots per step
  std::vector<chorusComm_t> comms = initBounded(kRanks);
  std::vector<std::string> failures(kRanks);
  onThreads(kRanks, [&](int r) {
    chorusStream_t s1 = nullptr, s2 = nullptr;
    ASSERT_EQ(chorusStreamCreate(&s1), chorusSuccess);
    ASSERT_EQ(chorusStreamCreate(&s2), chorusSuccess);
    std::vector<std::vector<float>> bufs(3, std::vector<float>(kCount));
    for (int it = 0; it < 5 && failures[r].empty(); ++it) {
      // Buffer k holds (k + 1) * 100 + rank: the sum over ranks is 3 * (k + 1) * 100 + 0 + 1 + 2.
      for (int k = 0; k < 3; ++k) std::fill(bufs[k].begin(), bufs[k].end(), static_cast<float>((k + 1) * 100 + r));
      chorusResult_t a =
          chorusAllReduce(bufs[0].data(), bufs[0].data(), kCount, chorusFloat32, chorusSum, comms[r], s1);
      chorusResult_t b =
          chorusAllReduce(bufs[1].data(), bufs[1].data(), kCount, chorusFloat32, chorusSum, comms[r], s2);
      chorusResult_t c =
          chorusAllReduce(bufs[2].data(), bufs[2].data(), kCount, chorusFloat32, chorusSum, comms[r], nullptr);
      chorusResult_t d = chorusStreamSynchronize(s1);
      chorusResult_t e = chorusStreamSynchronize(s2);
      if (a || b || c || d || e) {
        failures[r] = "rank " + std::to_string(r) + ": " + chorusGetLastError(comms[r]);
        break;
      }
      for (int k = 0; k < 3 && failures[r].empty(); ++k) {
        const float want = static_cast<float>(3 * (k + 1) * 100 + 3);
        if (int i = firstWrong(bufs[k], want); i >= 0) {
          failures[r] = "rank " + std::to_string(r) + " iteration " + std::to_string(it) + ": all-reduce " +
                        std::to_string(k) + " [" + std::to_string(i) + "] = " + std::to_string(bufs[k][i]) +
                        ", expected " + std::to_string(want);
        }
      }
    }
    EXPECT_EQ(chorusStreamDestroy(s1), chorusSuccess);
    EXPECT_EQ(chorusStreamDestroy(s2), chorusSuccess);
  });
  for (int r = 0; r < kRanks; ++r) EXPECT_EQ(failures[r], "");
  finish(comms, failures);
}

// A group that puts one communicator's operations on two streams is refused before anything runs (its works would run
// at once over the same connections), and the communicator stays usable.
TEST(StreamOrderTwoStreams, AGroupSpreadingOneCommunicatorOverStreamsIsRefused) {
  std::vector<chorusComm_t> comms = initBounded(1);
  chorusStream_t s = nullptr;
  ASSERT_EQ(chorusStreamCreate(&s), chorusSuccess);
  float a = 1, b = 2;
  ASSERT_EQ(chorusGroupStart(), chorusSuccess);
  ASSERT_EQ(chorusAllReduce(&a, &a, 1, chorusFloat32, chorusSum, comms[0], s), chorusSuccess);
  ASSERT_EQ(chorusAllReduce(&b, &b, 1, chorusFloat32, chorusSum, comms[0], nullptr), chorusSuccess);
  EXPECT_EQ(chorusGroupEnd(), chorusInvalidUsage);
  EXPECT_NE(std::string(chorusGetLastError(nullptr)).find("more than one stream"), std::string::npos)
      << chorusGetLastError(nullptr);
  EXPECT_EQ(chorusStreamSynchronize(s), chorusSuccess);  // nothing was queued
  float c = 3, d = 0;
  EXPECT_EQ(chorusAllReduce(&c, &d, 1, chorusFloat32, chorusSum, comms[0], s), chorusSuccess);
  EXPECT_EQ(chorusAllReduce(&c, &c, 1, chorusFloat32, chorusSum, comms[0], nullptr), chorusSuccess);
  EXPECT_EQ(chorusStreamSynchronize(s), chorusSuccess);
  EXPECT_EQ(d, 3.0f);
  EXPECT_EQ(chorusStreamDestroy(s), chorusSuccess);
  EXPECT_EQ(chorusCommDestroy(comms[0]), chorusSuccess);
}

// A blocking call that waits for an earlier operation on a host stream waits under the communicator's deadline: here
// that operation never completes (rank 1 never joins), and the blocking call ends with an error, not a hang.
TEST(StreamOrderTwoStreams, AWaitForAnEarlierOperationOnAStreamEndsByTheDeadline) {
  chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
  config.timeoutMs = 500;
  std::vector<chorusComm_t> comms = initBounded(2, &config);
  chorusStream_t s = nullptr;
  ASSERT_EQ(chorusStreamCreate(&s), chorusSuccess);
  std::vector<float> big(1 << 20, 1.0f);
  float x = 1, y = 0;
  ASSERT_EQ(chorusAllReduce(big.data(), big.data(), big.size(), chorusFloat32, chorusSum, comms[0], s), chorusSuccess);
  const auto start = Clock::now();
  const chorusResult_t rc = chorusAllReduce(&x, &y, 1, chorusFloat32, chorusSum, comms[0], nullptr);
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_NE(rc, chorusSuccess);
  EXPECT_LT(took, 5.0);
  EXPECT_NE(chorusStreamSynchronize(s), chorusSuccess);  // the stream's all-reduce timed out
  EXPECT_EQ(chorusStreamDestroy(s), chorusSuccess);
  for (chorusComm_t c : comms) chorusCommAbort(c);
}

}  // namespace
}  // namespace chorus::test
