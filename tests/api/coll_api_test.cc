// The data calls through the public header: bad input (a clear chorusInvalidArgument/InvalidUsage naming the
// argument, nothing sent, the communicator usable for the next call), host streams (1000 queued operations,
// errors surfacing at synchronize and in chorusCommGetAsyncError, issue order across single calls and group launches,
// a launch starting with nobody synchronizing, the stream thread's SCHED_BATCH policy), and groups (send/recv rings in
// any order and to self, nesting, the first error returned by chorusGroupEnd).
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>

#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "chorus/chorus.h"
#include "common/on_threads.h"

namespace {

using chorus::test::onThreads;

std::vector<chorusComm_t> makeComms(int n) {
  std::vector<chorusComm_t> comms(n);
  EXPECT_EQ(chorusCommInitAll(comms.data(), n, nullptr), chorusSuccess);
  return comms;
}

void destroyAll(std::vector<chorusComm_t>& comms) {
  for (auto c : comms) chorusCommDestroy(c);
}

// Checks that every rank can still all-reduce after a rejected call.
void expectUsable(std::vector<chorusComm_t>& comms) {
  const int n = static_cast<int>(comms.size());
  onThreads(n, [&](int r) {
    int x = r, y = -1;
    ASSERT_EQ(chorusAllReduce(&x, &y, 1, chorusInt32, chorusSum, comms[r], nullptr), chorusSuccess)
        << chorusGetLastError(comms[r]);
    EXPECT_EQ(y, n * (n - 1) / 2);
  });
}

std::string lastError(chorusComm_t c) {
  return chorusGetLastError(c);
}

TEST(CollApi, BadArgumentsAreRejectedAndTheCommunicatorStaysUsable) {
  auto comms = makeComms(2);
  chorusComm_t c = comms[0];
  float buf[64] = {};
  // Every check happens before anything is sent, so rank 1 need not take part.
  EXPECT_EQ(chorusAllReduce(buf, buf, 4, chorusFloat32, chorusSum, nullptr, nullptr), chorusInvalidArgument);
  EXPECT_NE(std::string(chorusGetLastError(nullptr)).find("comm"), std::string::npos);
  EXPECT_EQ(chorusAllReduce(buf, buf, 4, static_cast<chorusDataType_t>(42), chorusSum, c, nullptr),
            chorusInvalidArgument);
  EXPECT_NE(lastError(nullptr).find("datatype 42"), std::string::npos) << lastError(nullptr);
  EXPECT_EQ(chorusAllReduce(buf, buf, 4, chorusFloat32, static_cast<chorusRedOp_t>(9), c, nullptr),
            chorusInvalidArgument);
  EXPECT_NE(lastError(nullptr).find("op 9"), std::string::npos);
  EXPECT_EQ(chorusAllReduce(nullptr, buf, 4, chorusFloat32, chorusSum, c, nullptr), chorusInvalidArgument);
  EXPECT_NE(lastError(c).find("sendbuff is NULL"), std::string::npos) << lastError(c);
  EXPECT_EQ(chorusAllReduce(buf, nullptr, 4, chorusFloat32, chorusSum, c, nullptr), chorusInvalidArgument);
  EXPECT_NE(lastError(c).find("recvbuff is NULL"), std::string::npos);
  EXPECT_EQ(chorusBroadcast(buf, buf, 4, chorusFloat32, 2, c, nullptr), chorusInvalidArgument);
  EXPECT_NE(lastError(c).find("root 2"), std::string::npos);
  EXPECT_EQ(chorusReduce(buf, buf, 4, chorusFloat32, chorusSum, -1, c, nullptr), chorusInvalidArgument);
  EXPECT_EQ(chorusSend(buf, 4, chorusFloat32, 5, c, nullptr), chorusInvalidArgument);
  EXPECT_NE(lastError(c).find("peer 5"), std::string::npos);
  EXPECT_EQ(chorusRecv(buf, 4, chorusFloat32, -2, c, nullptr), chorusInvalidArgument);
  // Overlapping buffers that are not NCCL's in-place layout.
  EXPECT_EQ(chorusAllReduce(buf, buf + 1, 4, chorusFloat32, chorusSum, c, nullptr), chorusInvalidArgument);
  EXPECT_NE(lastError(c).find("overlap"), std::string::npos) << lastError(c);
  // Rank 0's in-place all-gather input is recvbuff + 0; recvbuff + 2 overlaps without being in place.
  EXPECT_EQ(chorusAllGather(buf + 2, buf, 4, chorusFloat32, c, nullptr), chorusInvalidArgument);
  EXPECT_NE(lastError(c).find("recvbuff + rank*sendcount"), std::string::npos) << lastError(c);
  EXPECT_EQ(chorusReduceScatter(buf, buf + 2, 4, chorusFloat32, chorusSum, c, nullptr), chorusInvalidArgument);
  EXPECT_NE(lastError(c).find("recvbuff == sendbuff + rank*recvcount"), std::string::npos) << lastError(c);
  // A count whose size in bytes overflows: by the element size, and (all-gather's output) only by the rank count.
  EXPECT_EQ(chorusAllReduce(buf, buf, SIZE_MAX / 2, chorusFloat32, chorusSum, c, nullptr), chorusInvalidArgument);
  EXPECT_NE(lastError(c).find("is too large"), std::string::npos) << lastError(c);
  EXPECT_EQ(chorusAllGather(buf, buf + 8, SIZE_MAX / 2 + 1, chorusUint8, c, nullptr), chorusInvalidArgument);
  EXPECT_NE(lastError(c).find("is too large"), std::string::npos) << lastError(c);
  // A stream that is not a host stream.
  int notAStream = 0;
  EXPECT_EQ(chorusAllReduce(buf, buf, 4, chorusFloat32, chorusSum, c, &notAStream), chorusInvalidArgument);
  EXPECT_NE(lastError(c).find("stream"), std::string::npos);
  // Count 0 is a valid no-op, even with NULL buffers.
  EXPECT_EQ(chorusAllReduce(nullptr, nullptr, 0, chorusFloat32, chorusSum, c, nullptr), chorusSuccess);
  EXPECT_EQ(chorusGroupEnd(), chorusInvalidUsage);
  expectUsable(comms);
  destroyAll(comms);
}

// Queues out.size() max-all-reduces of one int64 on s, each reading the previous one's result, so that issue order is
// checked and not just completion; the first reads in[0]. False (the test failed) when a call is refused.
bool queueChain(chorusComm_t comm, chorusStream_t s, const std::vector<int64_t>& in, std::vector<int64_t>& out) {
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t* src = i == 0 ? &in[0] : &out[i - 1];
    if (chorusAllReduce(src, &out[i], 1, chorusInt64, chorusMax, comm, s) != chorusSuccess) {
      ADD_FAILURE() << "operation " << i << ": " << chorusGetLastError(comm);
      return false;
    }
  }
  return true;
}

TEST(CollApi, ThousandOperationsOnOneStream) {
  const int n = 3, ops = 1000;
  auto comms = makeComms(n);
  onThreads(n, [&](int r) {
    chorusStream_t s;
    ASSERT_EQ(chorusStreamCreate(&s), chorusSuccess);
    std::vector<int64_t> in(ops), out(ops, -1);
    for (int i = 0; i < ops; ++i) in[i] = static_cast<int64_t>(r) * 1000 + i;
    ASSERT_TRUE(queueChain(comms[r], s, in, out));
    EXPECT_EQ(chorusStreamSynchronize(s), chorusSuccess) << chorusGetLastError(comms[r]);
    EXPECT_EQ(chorusStreamQuery(s), chorusSuccess);
    for (int i = 0; i < ops; ++i) EXPECT_EQ(out[i], (n - 1) * 1000) << "operation " << i;
    EXPECT_EQ(chorusStreamDestroy(s), chorusSuccess);
  });
  destroyAll(comms);
}

// Rank 0 queues more launches than a new stream's queue holds (4096 slots) while its first one cannot run (rank 1
// has not called yet), so the queue grows with launches in it: they all still run, in order.
TEST(CollApi, QueueDeeperThanANewStreamHoldsGrowsAndKeepsOrder) {
  const int n = 2, ops = 5000;
  auto comms = makeComms(n);
  std::atomic<bool> rank0Queued{false};
  onThreads(n, [&](int r) {
    while (r == 1 && !rank0Queued.load()) std::this_thread::yield();
    chorusStream_t s;
    std::vector<int64_t> in(ops, r), out(ops, -1);
    const bool queued = chorusStreamCreate(&s) == chorusSuccess && queueChain(comms[r], s, in, out);
    rank0Queued.store(true);  // after a failure too: rank 1 must not wait for ever
    ASSERT_TRUE(queued);
    EXPECT_EQ(chorusStreamSynchronize(s), chorusSuccess) << chorusGetLastError(comms[r]);
    for (int i = 0; i < ops; ++i) ASSERT_EQ(out[i], n - 1) << "operation " << i;
    EXPECT_EQ(chorusStreamDestroy(s), chorusSuccess);
  });
  destroyAll(comms);
}

// A stream runs launches of a few operations in batches and a group's launch of more on its own: a chain that
// alternates them (one all-reduce, then a group of three, each reading the previous result) must still run in issue
// order across every batch boundary, on the stream's thread and on the synchronizer. Sums of uint64 (wrapping):
// each result is twice the previous one, and an operation that ran early would have read the poison instead.
TEST(CollApi, SingleCallsAndGroupLaunchesKeepIssueOrderOnOneStream) {
  const int n = 2, steps = 300;
  constexpr uint64_t kPoison = 0xA5A5A5A5A5A5A5A5ull;
  auto comms = makeComms(n);
  onThreads(n, [&](int r) {
    chorusStream_t s;
    ASSERT_EQ(chorusStreamCreate(&s), chorusSuccess);
    std::vector<uint64_t> out(4 * steps, kPoison);
    const uint64_t first = 1;
    const uint64_t* prev = &first;
    size_t k = 0;
    auto call = [&]() {
      uint64_t* dst = &out[k++];
      const chorusResult_t res = chorusAllReduce(prev, dst, 1, chorusUint64, chorusSum, comms[r], s);
      prev = dst;
      return res;
    };
    for (int i = 0; i < steps; ++i) {
      ASSERT_EQ(call(), chorusSuccess) << chorusGetLastError(comms[r]);
      ASSERT_EQ(chorusGroupStart(), chorusSuccess);
      for (int g = 0; g < 3; ++g) ASSERT_EQ(call(), chorusSuccess) << chorusGetLastError(comms[r]);
      ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(comms[r]);
      if (i % 50 == 49) std::this_thread::sleep_for(std::chrono::microseconds(100));  // the thread may sleep
    }
    EXPECT_EQ(chorusStreamSynchronize(s), chorusSuccess) << chorusGetLastError(comms[r]);
    uint64_t want = first;
    for (size_t i = 0; i < out.size(); ++i) {
      want *= n;  // wraps modulo 2^64, as the sum does
      ASSERT_EQ(out[i], want) << "operation " << i;
    }
    EXPECT_EQ(chorusStreamDestroy(s), chorusSuccess);
  });
  destroyAll(comms);
}

// A launch must start with nobody synchronizing its stream, whatever the stream's thread was doing when it came:
// running the launch before, watching for the next one (it came within the thread's 20 us watch), or asleep (it
// came later). Rank 0 queues an all-reduce and only polls chorusStreamQuery, which runs nothing; rank 1 makes the
// blocking call, which can finish only once rank 0's stream thread has run its side. Gaps of none, 5 us, 50 us and
// 3 ms between rounds reach each of the three states; every result is checked.
TEST(CollApi, AQueuedLaunchRunsWithoutASynchronizeAfterAnyPause) {
  const int n = 2, rounds = 40;
  auto comms = makeComms(n);
  const std::chrono::microseconds gaps[] = {std::chrono::microseconds(0), std::chrono::microseconds(5),
                                            std::chrono::microseconds(50), std::chrono::microseconds(3000)};
  onThreads(n, [&](int r) {
    chorusStream_t s = nullptr;
    if (r == 0) {
      ASSERT_EQ(chorusStreamCreate(&s), chorusSuccess);
    }
    for (int i = 0; i < rounds; ++i) {
      std::this_thread::sleep_for(gaps[i % 4]);
      int64_t x = static_cast<int64_t>(r + 1) * (i + 1);
      int64_t y = -1;
      ASSERT_EQ(chorusAllReduce(&x, &y, 1, chorusInt64, chorusSum, comms[r], s), chorusSuccess)
          << chorusGetLastError(comms[r]);
      if (r == 0) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        chorusResult_t q = chorusInProgress;
        while ((q = chorusStreamQuery(s)) == chorusInProgress && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::yield();
        }
        ASSERT_EQ(q, chorusSuccess) << "round " << i << ": " << chorusGetErrorString(q);
      }
      EXPECT_EQ(y, 3 * (i + 1)) << "rank " << r << ", round " << i;
    }
    if (s != nullptr) {
      EXPECT_EQ(chorusStreamDestroy(s), chorusSuccess);
    }
  });
  destroyAll(comms);
}

// The threads of this process whose scheduling policy is SCHED_BATCH (Linux: sched_getscheduler takes a thread id).
int batchThreads() {
  int count = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    const pid_t tid = static_cast<pid_t>(std::stoi(task.path().filename().string()));
    if (sched_getscheduler(tid) == SCHED_BATCH) ++count;
  }
  return count;
}

// A stream's thread runs as SCHED_BATCH, so that an enqueue waking it does not give it the caller's core ahead of the
// caller (docs/performance.md, session 24); the callers' threads keep their policy, and so do the threads it creates.
TEST(CollApi, AHostStreamsThreadDoesNotPreemptTheThreadThatWakesIt) {
  const int before = batchThreads();
  chorusStream_t a = nullptr, b = nullptr;
  ASSERT_EQ(chorusStreamCreate(&a), chorusSuccess);
  ASSERT_EQ(chorusStreamCreate(&b), chorusSuccess);
  // The policy is set by the thread itself as it starts: give it a moment.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (batchThreads() < before + 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(batchThreads(), before + 2);
  EXPECT_NE(sched_getscheduler(0), SCHED_BATCH);

  // A thread the stream's thread creates does not keep the policy: a group over two communicators, run by the stream's
  // thread (nobody synchronizes), creates the second communicator's worker there.
  auto comms = makeComms(2);
  int x[2] = {1, 2}, y[2] = {-1, -1};
  ASSERT_EQ(chorusGroupStart(), chorusSuccess);
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(chorusAllReduce(&x[r], &y[r], 1, chorusInt32, chorusSum, comms[r], a), chorusSuccess);
  }
  ASSERT_EQ(chorusGroupEnd(), chorusSuccess);
  chorusResult_t q = chorusInProgress;
  while ((q = chorusStreamQuery(a)) == chorusInProgress && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(q, chorusSuccess);
  EXPECT_EQ(y[0], 3);
  EXPECT_EQ(y[1], 3);
  EXPECT_EQ(batchThreads(), before + 2);

  EXPECT_EQ(chorusStreamDestroy(a), chorusSuccess);
  EXPECT_EQ(chorusStreamDestroy(b), chorusSuccess);
  destroyAll(comms);
  EXPECT_EQ(batchThreads(), before);
}

TEST(CollApi, ErrorsSurfaceAtSynchronizeAndAsyncError) {
  chorusUniqueId id;
  ASSERT_EQ(chorusGetUniqueId(&id), chorusSuccess);
  chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
  config.timeoutMs = 300;
  std::vector<chorusComm_t> comms(2);
  onThreads(2, [&](int r) { ASSERT_EQ(chorusCommInitRankConfig(&comms[r], 2, id, r, &config), chorusSuccess); });
  chorusStream_t s;
  ASSERT_EQ(chorusStreamCreate(&s), chorusSuccess);
  float x = 1;
  // Rank 1 never joins: the enqueue succeeds, the execution times out.
  ASSERT_EQ(chorusAllReduce(&x, &x, 1, chorusFloat32, chorusSum, comms[0], s), chorusSuccess);
  chorusResult_t q = chorusStreamQuery(s);
  EXPECT_TRUE(q == chorusInProgress || q == chorusTimeout) << chorusGetErrorString(q);
  EXPECT_EQ(chorusStreamSynchronize(s), chorusTimeout);
  chorusResult_t async = chorusSuccess;
  ASSERT_EQ(chorusCommGetAsyncError(comms[0], &async), chorusSuccess);
  EXPECT_EQ(async, chorusTimeout);
  EXPECT_NE(lastError(comms[0]).find("AllReduce"), std::string::npos) << lastError(comms[0]);
  chorusStreamDestroy(s);
  for (auto c : comms) chorusCommAbort(c);
}

class SendRecvRings : public ::testing::TestWithParam<int> {};

// Every rank sends to the next and receives from the previous one, posting the receive first, the send
// first, or only itself, inside one group: none of the orders may deadlock.
TEST_P(SendRecvRings, AnyOrderInAGroup) {
  const int n = GetParam();
  auto comms = makeComms(n);
  const size_t count = 300000;  // larger than the FIFO: the group must progress both directions together
  for (int order = 0; order < 3; ++order) {
    onThreads(n, [&](int r) {
      std::vector<int32_t> out(count), in(count, -1), self(count, -1);
      std::iota(out.begin(), out.end(), r * 7);
      const int next = (r + 1) % n, prev = (r + n - 1) % n;
      ASSERT_EQ(chorusGroupStart(), chorusSuccess);
      if (order == 0) {
        chorusSend(out.data(), count, chorusInt32, next, comms[r], nullptr);
        chorusRecv(in.data(), count, chorusInt32, prev, comms[r], nullptr);
      } else {
        chorusRecv(in.data(), count, chorusInt32, prev, comms[r], nullptr);
        chorusSend(out.data(), count, chorusInt32, next, comms[r], nullptr);
      }
      if (order == 2) {  // and to itself
        chorusSend(out.data(), count, chorusInt32, r, comms[r], nullptr);
        chorusRecv(self.data(), count, chorusInt32, r, comms[r], nullptr);
      }
      ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(comms[r]);
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(in[i], static_cast<int32_t>(prev * 7 + i));
      if (order == 2) {
        for (size_t i = 0; i < count; ++i) ASSERT_EQ(self[i], static_cast<int32_t>(r * 7 + i));
      }
    });
  }
  destroyAll(comms);
}

INSTANTIATE_TEST_SUITE_P(Ranks, SendRecvRings, ::testing::Values(1, 2, 3, 5));

class InPlaceAllToAll : public ::testing::TestWithParam<int> {};

// An in-place all-to-all alone in its work moves each block through the FIFO without a staging copy: the block
// received from rank j may land only where the block sent to rank j has been read. Blocks of 4 slots' worth and
// more (the FIFO's whole depth and beyond) make the receive wait on the send. Two in a group on one buffer (the
// second must see the first's result) keep the staging copy. Every element is checked.
TEST_P(InPlaceAllToAll, AloneAndTwiceInAGroup) {
  const int n = GetParam();
  auto comms = makeComms(n);
  // value(src, dst, i): element i of the block rank src sends to rank dst.
  auto value = [](int src, int dst, size_t i) { return static_cast<int32_t>(src * 1000003 + dst * 7919 + i); };
  for (size_t count : {size_t(3), size_t(14), size_t(300000), size_t(1100000)}) {
    onThreads(n, [&](int r) {
      std::vector<int32_t> buf(count * n);
      for (int d = 0; d < n; ++d) {
        for (size_t i = 0; i < count; ++i) buf[d * count + i] = value(r, d, i);
      }
      ASSERT_EQ(chorusAlltoAll(buf.data(), buf.data(), count, chorusInt32, comms[r], nullptr), chorusSuccess)
          << chorusGetLastError(comms[r]);
      for (int s = 0; s < n; ++s) {
        for (size_t i = 0; i < count; ++i) {
          ASSERT_EQ(buf[s * count + i], value(s, r, i)) << "count " << count << " rank " << r << " from " << s;
        }
      }
      // Twice in one group: the second exchange sends back what the first received, so each block is home again.
      ASSERT_EQ(chorusGroupStart(), chorusSuccess);
      chorusAlltoAll(buf.data(), buf.data(), count, chorusInt32, comms[r], nullptr);
      chorusAlltoAll(buf.data(), buf.data(), count, chorusInt32, comms[r], nullptr);
      ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(comms[r]);
      for (int s = 0; s < n; ++s) {
        for (size_t i = 0; i < count; ++i) {
          ASSERT_EQ(buf[s * count + i], value(r, s, i)) << "group, count " << count << " rank " << r;
        }
      }
    });
  }
  destroyAll(comms);
}

INSTANTIATE_TEST_SUITE_P(Ranks, InPlaceAllToAll, ::testing::Values(1, 2, 3, 5));

TEST(CollApi, GroupsNestAndReturnTheFirstError) {
  auto comms = makeComms(2);
  onThreads(2, [&](int r) {
    int a = r + 1, b = 0, c = r + 10, d = 0;
    // Nested: only the outermost GroupEnd launches; both all-reduces complete.
    ASSERT_EQ(chorusGroupStart(), chorusSuccess);
    ASSERT_EQ(chorusGroupStart(), chorusSuccess);
    ASSERT_EQ(chorusAllReduce(&a, &b, 1, chorusInt32, chorusSum, comms[r], nullptr), chorusSuccess);
    ASSERT_EQ(chorusGroupEnd(), chorusSuccess);
    EXPECT_EQ(b, 0);  // not launched yet
    ASSERT_EQ(chorusAllReduce(&c, &d, 1, chorusInt32, chorusSum, comms[r], nullptr), chorusSuccess);
    ASSERT_EQ(chorusGroupEnd(), chorusSuccess);
    EXPECT_EQ(b, 3);
    EXPECT_EQ(d, 21);
  });
  // A bad call inside a group: its own call fails, GroupEnd returns that error and launches nothing.
  float x = 0;
  ASSERT_EQ(chorusGroupStart(), chorusSuccess);
  EXPECT_EQ(chorusAllReduce(&x, &x, 1, chorusFloat32, static_cast<chorusRedOp_t>(77), comms[0], nullptr),
            chorusInvalidArgument);
  EXPECT_EQ(chorusGroupEnd(), chorusInvalidArgument);
  EXPECT_NE(lastError(nullptr).find("op 77"), std::string::npos) << lastError(nullptr);
  expectUsable(comms);
  destroyAll(comms);
}

// A thread that repeats an operation skips planning it again (core/launch.cc keeps the last plan): each call below
// repeats the one before with one argument changed (output buffer, input buffer, in place, count, reduction,
// datatype, root, peer, communicator), and each must get its own result. Every element is checked, and a buffer
// the call does not name keeps its contents.
TEST(CollApi, RepeatedOperationsWithOneArgumentChangedEachGetTheirOwnResult) {
  const int n = 3;
  auto comms = makeComms(n);
  std::vector<chorusComm_t> reversed(n);  // the same ranks in the opposite order
  onThreads(n, [&](int r) { ASSERT_EQ(chorusCommSplit(comms[r], 0, n - r, &reversed[r], nullptr), chorusSuccess); });
  const size_t count = 64;
  const int32_t kUntouched = -7;
  onThreads(n, [&](int r) {
    chorusComm_t c = comms[r];
    std::vector<int32_t> a(count), b(count), x(count, kUntouched), y(count, kUntouched);
    for (size_t i = 0; i < count; ++i) {
      a[i] = static_cast<int32_t>(r * 100 + i);
      b[i] = static_cast<int32_t>(r * 1000 - static_cast<int32_t>(i));
    }
    // sum over ranks of f(rank, i)
    auto sumOf = [&](size_t i, auto f) {
      int32_t s = 0;
      for (int q = 0; q < n; ++q) s += f(q, i);
      return s;
    };
    auto fa = [](int q, size_t i) { return static_cast<int32_t>(q * 100 + i); };
    auto fb = [](int q, size_t i) { return static_cast<int32_t>(q * 1000 - static_cast<int32_t>(i)); };
    auto allReduce = [&](const void* in, void* out, size_t k, chorusDataType_t t, chorusRedOp_t op) {
      ASSERT_EQ(chorusAllReduce(in, out, k, t, op, c, nullptr), chorusSuccess) << chorusGetLastError(c);
    };
    allReduce(a.data(), x.data(), count, chorusInt32, chorusSum);
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(x[i], sumOf(i, fa)) << i;
    allReduce(a.data(), y.data(), count, chorusInt32, chorusSum);  // another output
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(y[i], sumOf(i, fa)) << i;
    std::fill(x.begin(), x.end(), kUntouched);
    allReduce(b.data(), y.data(), count, chorusInt32, chorusSum);  // another input
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(y[i], sumOf(i, fb)) << i;
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(x[i], kUntouched) << i;
    std::vector<int32_t> bIn = b;
    allReduce(bIn.data(), bIn.data(), count, chorusInt32, chorusSum);  // in place
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(bIn[i], sumOf(i, fb)) << i;
    allReduce(a.data(), x.data(), count / 2, chorusInt32, chorusSum);  // fewer elements
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(x[i], i < count / 2 ? sumOf(i, fa) : kUntouched) << i;
    allReduce(a.data(), x.data(), count, chorusInt32, chorusMax);  // another reduction
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(x[i], fa(n - 1, i)) << i;
    std::vector<float> fin(count, static_cast<float>(r) + 0.5f), fout(count, -1.0f);
    allReduce(fin.data(), fout.data(), count, chorusFloat32, chorusMax);  // another datatype
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(fout[i], static_cast<float>(n - 1) + 0.5f) << i;
    for (int root : {0, 2, 0}) {  // another root
      std::fill(x.begin(), x.end(), kUntouched);
      ASSERT_EQ(chorusBroadcast(a.data(), x.data(), count, chorusInt32, root, c, nullptr), chorusSuccess);
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(x[i], fa(root, i)) << "root " << root << " element " << i;
    }
    for (int step : {1, n - 1, 1}) {  // another peer: the ring one way, then the other
      std::fill(x.begin(), x.end(), kUntouched);
      const int to = (r + step) % n, from = (r + n - step) % n;
      ASSERT_EQ(chorusGroupStart(), chorusSuccess);
      chorusSend(a.data(), count, chorusInt32, to, c, nullptr);
      chorusRecv(x.data(), count, chorusInt32, from, c, nullptr);
      ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(c);
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(x[i], fa(from, i)) << "step " << step << " element " << i;
    }
    // Another communicator, same call: rank 0 of the reversed one is rank n - 1 here.
    for (chorusComm_t comm : {c, reversed[r], c}) {
      std::fill(x.begin(), x.end(), kUntouched);
      ASSERT_EQ(chorusBroadcast(a.data(), x.data(), count, chorusInt32, 0, comm, nullptr), chorusSuccess);
      const int root = comm == c ? 0 : n - 1;
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(x[i], fa(root, i)) << "root " << root << " element " << i;
    }
  });
  destroyAll(reversed);
  destroyAll(comms);
}

TEST(CollApi, OneThreadDrivesSeveralRanksThroughAGroup) {
  const int n = 4;
  auto comms = makeComms(n);
  std::vector<std::vector<float>> bufs(n, std::vector<float>(100000));
  for (int r = 0; r < n; ++r) std::fill(bufs[r].begin(), bufs[r].end(), static_cast<float>(r));
  ASSERT_EQ(chorusGroupStart(), chorusSuccess);
  for (int r = 0; r < n; ++r) {
    chorusAllReduce(bufs[r].data(), bufs[r].data(), bufs[r].size(), chorusFloat32, chorusSum, comms[r], nullptr);
  }
  ASSERT_EQ(chorusGroupEnd(), chorusSuccess);
  for (int r = 0; r < n; ++r) {
    for (float v : bufs[r]) ASSERT_EQ(v, 6.0f);
  }
  destroyAll(comms);
}

}  // namespace
