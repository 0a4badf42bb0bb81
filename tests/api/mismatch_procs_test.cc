// Mismatched collectives between processes on one host, where the ranks' messages may travel different ways: a
// small message in a mailbox line where the peer expects slots, or a remote reference (single copy) where the types
// differ. Every rank fails with chorusRemoteError well before the deadline, never hangs or returns garbage.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "common/child.h"

namespace chorus::test {
namespace {

constexpr int kTimeoutMs = 60000;

// Each rank all-reduces count(rank) elements of type(rank); exit status 0 when the call failed with
// chorusRemoteError in less than half the deadline.
int allReduceMismatch(int rank, size_t count, chorusDataType_t type) {
  chorusComm_t comm = nullptr;
  if (chorusCommInitFromEnv(&comm, nullptr) != chorusSuccess) {
    fprintf(stderr, "rank %d: init failed: %s\n", rank, chorusGetLastError(nullptr));
    return 2;
  }
  std::vector<double> buf(count, 1.0);  // room for any type
  auto t0 = std::chrono::steady_clock::now();
  chorusResult_t rc = chorusAllReduce(buf.data(), buf.data(), count, type, chorusSum, comm, nullptr);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  fprintf(stderr, "rank %d: result %d after %lld ms: %s\n", rank, rc, static_cast<long long>(ms),
          chorusGetLastError(comm));
  chorusCommAbort(comm);
  return rc == chorusRemoteError && ms < kTimeoutMs / 2 ? 0 : 1;
}

// 8 bytes (a mailbox line) against 4000 bytes (a slot).
const bool kMailbox = registerChild("mailbox_vs_slot", [](int rank, int, const std::vector<std::string>&) {
  return allReduceMismatch(rank, rank == 0 ? 2 : 1000, chorusFloat32);
});

// 8 bytes against 400 bytes, both in mailbox lines (a line holds up to 568).
const bool kMailboxSizes = registerChild("mailbox_sizes", [](int rank, int, const std::vector<std::string>&) {
  return allReduceMismatch(rank, rank == 0 ? 2 : 100, chorusFloat32);
});

// 4 MiB of int32 against 4 MiB of float32, by reference (CHORUS_CMA_MIN_BYTES=1).
const bool kRefs = registerChild("ref_types", [](int rank, int, const std::vector<std::string>&) {
  return allReduceMismatch(rank, size_t{1} << 20, rank == 0 ? chorusInt32 : chorusFloat32);
});

// A send of 8 bytes (a mailbox line) received as 4000 bytes (slots): the receiver fails saying so.
const bool kP2p = registerChild("p2p_sizes", [](int rank, int, const std::vector<std::string>&) {
  chorusComm_t comm = nullptr;
  if (chorusCommInitFromEnv(&comm, nullptr) != chorusSuccess) return 2;
  std::vector<float> buf(1000, 1.0f);
  auto t0 = std::chrono::steady_clock::now();
  chorusResult_t rc = rank == 0 ? chorusSend(buf.data(), 2, chorusFloat32, 1, comm, nullptr)
                                : chorusRecv(buf.data(), 1000, chorusFloat32, 0, comm, nullptr);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  const std::string msg = chorusGetLastError(comm);
  fprintf(stderr, "rank %d: result %d after %lld ms: %s\n", rank, rc, static_cast<long long>(ms), msg.c_str());
  if (rank == 0) usleep(500000);  // the receiver sees the mismatch, not the end of the communicator
  chorusCommAbort(comm);
  if (rank == 0) return rc == chorusSuccess ? 0 : 1;
  return rc == chorusRemoteError && ms < kTimeoutMs / 2 && msg.find("disagree") != std::string::npos ? 0 : 1;
});

// A send of 1 MiB received as 512 KiB, the receiver waiting first (so the send goes by reference, fifo.h): the
// receiver fails saying so, and reads nothing past its buffer.
const bool kP2pRef = registerChild("p2p_ref_sizes", [](int rank, int, const std::vector<std::string>&) {
  chorusComm_t comm = nullptr;
  if (chorusCommInitFromEnv(&comm, nullptr) != chorusSuccess) return 2;
  constexpr size_t kSent = 262144;  // floats: 1 MiB
  std::vector<float> buf(kSent, 1.0f);
  chorusResult_t rc;
  if (rank == 0) {
    usleep(100000);  // the receiver announces first
    rc = chorusSend(buf.data(), kSent, chorusFloat32, 1, comm, nullptr);
  } else {
    rc = chorusRecv(buf.data(), kSent / 2, chorusFloat32, 0, comm, nullptr);
  }
  const std::string msg = chorusGetLastError(comm);
  fprintf(stderr, "rank %d: result %d: %s\n", rank, rc, msg.c_str());
  // Through the slots (CHORUS_CMA_DISABLE) the whole send fits in the FIFO and returns at once: the receiver must
  // see the mismatch, not the end of the communicator (on a loaded machine it had not looked yet, 1 run in 15).
  if (rank == 0) usleep(500000);
  chorusCommAbort(comm);
  // The sender fails too (the receiver closed its end) or, had it finished first, succeeded.
  if (rank == 0) return rc == chorusSuccess || rc == chorusRemoteError ? 0 : 1;
  return rc == chorusRemoteError && msg.find("disagree") != std::string::npos ? 0 : 1;
});

// Runs the child on 2 ranks; each must exit 0 (it checked its own outcome).
void expectAllFail(const char* child, const std::map<std::string, std::string>& env) {
  ChildOptions opt;
  opt.timeoutSec = 120;
  opt.env = env;
  opt.env["CHORUS_TIMEOUT_MS"] = std::to_string(kTimeoutMs);
  auto results = runChildren(child, 2, opt);
  for (size_t r = 0; r < results.size(); ++r) EXPECT_EQ(results[r].exitCode, 0) << "rank " << r;
}

TEST(MismatchProcs, MailboxAgainstSlot) {
  expectAllFail("mailbox_vs_slot", {});
}

TEST(MismatchProcs, MailboxMessagesOfDifferentSizes) {
  expectAllFail("mailbox_sizes", {});
}

TEST(MismatchProcs, SendAndRecvOfDifferentSizes) {
  expectAllFail("p2p_sizes", {});
}

// By reference where the receiver waits first (forced: by default only where CMA reads are fast, transport/cma.h).
TEST(MismatchProcs, SendAndRecvOfDifferentSizesByReference) {
  expectAllFail("p2p_ref_sizes", {{"CHORUS_P2P_CMA_MIN_BYTES", "65536"}});
}

// The same through the slots: the receiver takes the send's first 512 KiB as whole slots, and fails on the first of
// them because each carries the transfer's size (p2p_engine.cc, transferTag) instead of leaving the rest of the send
// to the connection's next transfer.
TEST(MismatchProcs, SendAndRecvOfDifferentSizesThroughSlots) {
  expectAllFail("p2p_ref_sizes", {{"CHORUS_CMA_DISABLE", "1"}});
}

TEST(MismatchProcs, ReferencesOfDifferentTypes) {
  expectAllFail("ref_types", {{"CHORUS_CMA_MIN_BYTES", "1"}});
}

}  // namespace
}  // namespace chorus::test

CHORUS_TEST_MAIN()
