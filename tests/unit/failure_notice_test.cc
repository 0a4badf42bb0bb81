// Failure notices carry the status of their first cause: a peer of a rank that timed out fails with chorusTimeout,
// a peer of a rank that failed otherwise with chorusRemoteError, over both bootstraps (in process, and over the
// endpoint's sockets with ranks as threads).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "base/error.h"
#include "bootstrap/bootstrap.h"
#include "bootstrap/failure_notice.h"
#include "bootstrap/unique_id.h"
#include "bootstrap_test_util.h"

namespace chorus::bootstrap {
namespace {

using testing::errorOf;
using testing::runRanks;
using testing::testCtx;

// The error checkFailureNotices() raises on `b` (kSuccess and "" when it raises none).
std::pair<Status, std::string> noticeOn(const Bootstrap& b) {
  try {
    b.checkFailureNotices();
  } catch (const Error& e) {
    return {e.status(), e.what()};
  }
  return {Status::kSuccess, ""};
}

// Polls until a notice arrives on `b` (the endpoint's service thread delivers socket messages on its own
// schedule), at most 10 s.
std::pair<Status, std::string> awaitNotice(const Bootstrap& b) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    auto n = noticeOn(b);
    if (n.first != Status::kSuccess || std::chrono::steady_clock::now() > until) return n;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

TEST(FailureNotice, OnlyATimeoutKeepsItsStatusAtThePeers) {
  EXPECT_EQ(noticeStatus(Status::kTimeout), Status::kTimeout);
  for (Status s : {Status::kSuccess, Status::kUnhandledCudaError, Status::kSystemError, Status::kInternalError,
                   Status::kInvalidArgument, Status::kInvalidUsage, Status::kRemoteError, Status::kInProgress}) {
    EXPECT_EQ(noticeStatus(s), Status::kRemoteError) << statusName(s);
  }
}

TEST(FailureNotice, EncodingHoldsTheCauseAndCutsALongReason) {
  const std::vector<uint8_t> shortOne = encodeFailureNotice(Status::kTimeout, "why");
  ASSERT_EQ(shortOne.size(), 4u);
  EXPECT_EQ(shortOne[0], static_cast<uint8_t>(Status::kTimeout));
  EXPECT_EQ(std::string(shortOne.begin() + 1, shortOne.end()), "why");
  const std::vector<uint8_t> longOne = encodeFailureNotice(Status::kSystemError, std::string(5000, 'x'));
  EXPECT_EQ(longOne.size(), 1 + kFailureNoticeMaxText);
  EXPECT_EQ(longOne[0], static_cast<uint8_t>(Status::kSystemError));
}

// Every other rank of the communicator raises the notice of `from`; `from` itself raises nothing.
void expectNoticeEverywhereElse(const std::vector<std::unique_ptr<Bootstrap>>& bs, int from, Status want,
                                const std::string& why) {
  for (int r = 0; r < static_cast<int>(bs.size()); ++r) {
    auto n = noticeOn(*bs[r]);
    if (r == from) {
      EXPECT_EQ(n.first, Status::kSuccess) << n.second;
      continue;
    }
    EXPECT_EQ(n.first, want) << "rank " << r << ": " << n.second;
    const std::string expect = "rank " + std::to_string(r) + ": peer rank " + std::to_string(from) + " failed: " + why;
    EXPECT_EQ(n.second, expect);
    EXPECT_TRUE(carriesFailureNotice(n.second)) << n.second;
  }
}

// A notice is recognized as checkFailureNotices words it, alone or inside a longer error; other errors that name a
// peer rank are not notices (their cause is still to be looked for).
TEST(FailureNotice, ANoticeIsRecognizedByItsWordsOnly) {
  EXPECT_TRUE(carriesFailureNotice("rank 2: peer rank 0 failed: rank 0: timed out"));
  EXPECT_TRUE(carriesFailureNotice("rank 2: peer rank 13 failed: "));
  EXPECT_TRUE(
      carriesFailureNotice("rank 1 -> rank 0 lane 0 over shm: the sending end closed the connection (peer "
                           "rank 1 failed: rank 1 destroyed or aborted the communicator)"));
  EXPECT_FALSE(carriesFailureNotice("rank 0: bootstrap peer rank 2 is gone: its endpoint closed"));
  EXPECT_FALSE(carriesFailureNotice("rank 0: peer rank failed: "));
  EXPECT_FALSE(carriesFailureNotice("rank 0: peer rank 3 failed"));
  EXPECT_FALSE(carriesFailureNotice("peer rank 3x failed: y"));
  EXPECT_FALSE(carriesFailureNotice(""));
}

TEST(FailureNotice, InProcessPeersOfATimedOutRankTimeOutToo) {
  auto bs = makeInProcessBootstraps(3);
  const std::string why = "rank 1: AllReduce(count 1, float32): no progress before the deadline; rank 0 is stopped";
  bs[1]->announceFailure(Status::kTimeout, why);
  expectNoticeEverywhereElse(bs, 1, Status::kTimeout, why);
}

TEST(FailureNotice, InProcessPeersOfAnAbortedRankGetARemoteError) {
  auto bs = makeInProcessBootstraps(3);
  bs[2]->announceFailure(Status::kRemoteError, "rank 2 aborted the communicator (chorusCommAbort)");
  expectNoticeEverywhereElse(bs, 2, Status::kRemoteError, "rank 2 aborted the communicator (chorusCommAbort)");
  auto other = makeInProcessBootstraps(2);
  other[0]->announceFailure(Status::kSystemError, "rank 0: out of memory");
  expectNoticeEverywhereElse(other, 0, Status::kRemoteError, "rank 0: out of memory");
}

// Over sockets: rank `from` announces with `cause` once every rank is up; the others see the notice with the
// status noticeStatus(cause).
void socketNotice(int n, int from, Status cause) {
  UniqueId id = createUniqueId();
  const std::string why = "rank " + std::to_string(from) + ": the first cause";
  std::vector<std::pair<Status, std::string>> seen(n);
  auto errors = runRanks(n, [&](int r) {
    auto b = Bootstrap::init(id, r, n, testCtx());
    b->barrier(testCtx());
    if (r == from) b->announceFailure(cause, why);
    seen[r] = r == from ? noticeOn(*b) : awaitNotice(*b);
    b->barrier(testCtx());  // nobody leaves (and closes its connections) before every notice is read
  });
  for (int r = 0; r < n; ++r) {
    ASSERT_FALSE(errors[r]) << errorOf(errors[r]).second;
    if (r == from) {
      EXPECT_EQ(seen[r].first, Status::kSuccess) << seen[r].second;
      continue;
    }
    EXPECT_EQ(seen[r].first, noticeStatus(cause)) << seen[r].second;
    EXPECT_EQ(seen[r].second, "rank " + std::to_string(r) + ": peer rank " + std::to_string(from) + " failed: " + why);
  }
}

TEST(FailureNotice, SocketPeersOfATimedOutRankTimeOutToo) {
  socketNotice(3, 0, Status::kTimeout);
}

TEST(FailureNotice, SocketPeersOfAFailedRankGetARemoteError) {
  socketNotice(3, 2, Status::kInternalError);
}

}  // namespace
}  // namespace chorus::bootstrap
