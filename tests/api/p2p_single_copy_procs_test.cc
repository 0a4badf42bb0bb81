// Point-to-point transfers between processes on one host where the receiver waits first: the sender then lets it copy
// once, straight from the sender's buffer (transport/fifo.h, announced receives; CHORUS_P2P_CMA_MIN_BYTES, from 64 KiB
// by default where CMA reads are fast). Each case checks every element it receives, and that what completed without
// the receiver before (a send that fits the FIFO, outside a group) still does: the exchange without a group below
// would hang until the deadline if such a send waited for its receiver.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "common/child.h"

namespace chorus::test {
namespace {

// Element i of what rank `from` sends in round `round`.
int32_t value(int from, int round, size_t i) {
  return static_cast<int32_t>(from * 1000003 + round * 7919 + static_cast<int64_t>(i % 1000000) * 3 + 1);
}

std::vector<int32_t> pattern(int from, int round, size_t count) {
  std::vector<int32_t> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = value(from, round, i);
  return v;
}

// Counts the elements of `got` that differ from what `from` sent in `round`, and says the first.
size_t wrongElements(const std::vector<int32_t>& got, int from, int round, int rank) {
  size_t wrong = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] == value(from, round, i)) continue;
    if (wrong++ == 0) {
      fprintf(stderr, "rank %d: round %d, element %zu of %zu from rank %d: %d, expected %d\n", rank, round, i,
              got.size(), from, got[i], value(from, round, i));
    }
  }
  return wrong;
}

bool ok(chorusResult_t rc, chorusComm_t comm, int rank, const char* what) {
  if (rc == chorusSuccess) return true;
  fprintf(stderr, "rank %d: %s returned %d: %s\n", rank, what, rc, chorusGetLastError(comm));
  return false;
}

// What a child's round sees: its communicator, its neighbours on the ring of ranks, the round and its element count.
struct Round {
  chorusComm_t comm;
  int rank, next, prev;
  int number;
  size_t count;
};

// One round: false when a call failed; adds the elements that arrived wrong to *wrong.
using RoundFn = std::function<bool(const Round&, size_t* wrong)>;

// Runs `round` once per count, in order, on a communicator from the environment: the child's exit status (0 when every
// call succeeded and every element arrived right).
int eachCount(int rank, int nranks, const std::vector<size_t>& counts, const RoundFn& round) {
  chorusComm_t comm = nullptr;
  if (chorusCommInitFromEnv(&comm, nullptr) != chorusSuccess) {
    fprintf(stderr, "rank %d: init failed: %s\n", rank, chorusGetLastError(nullptr));
    return 2;
  }
  size_t wrong = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const Round r{comm, rank, (rank + 1) % nranks, (rank + nranks - 1) % nranks, static_cast<int>(i), counts[i]};
    if (!round(r, &wrong)) return 1;
  }
  chorusCommDestroy(comm);
  return wrong == 0 ? 0 : 1;
}

// One group: `out` to the next rank, `in` from the previous (the same buffer for the in-place exchange).
bool groupExchange(const Round& r, const int32_t* out, int32_t* in, size_t count) {
  chorusGroupStart();
  chorusSend(out, count, chorusInt32, r.next, r.comm, nullptr);
  chorusRecv(in, count, chorusInt32, r.prev, r.comm, nullptr);
  return ok(chorusGroupEnd(), r.comm, r.rank, "chorusGroupEnd");
}

// Element counts that cross the mailbox, the slot, the single-copy threshold and the FIFO's capacity (1 MiB), in an
// order that makes the two ends number transfers of every kind (fifo.h: both count those that skip the mailbox),
// three times over.
std::vector<size_t> mixedCounts() {
  std::vector<size_t> counts;
  for (int pass = 0; pass < 3; ++pass) {
    for (size_t c : {2, 1000, 16383, 16384, 65537, 262143, 1, 300000, 786432 + 3, 5000}) counts.push_back(c);
  }
  return counts;
}

// Every rank sends to the next and receives from the previous in one group, round after round, sizes changing.
const bool kGroupRing = registerChild("group_ring", [](int rank, int nranks, const std::vector<std::string>&) {
  return eachCount(rank, nranks, mixedCounts(), [](const Round& r, size_t* wrong) {
    const std::vector<int32_t> out = pattern(r.rank, r.number, r.count);
    std::vector<int32_t> in(r.count, -1);
    if (!groupExchange(r, out.data(), in.data(), r.count)) return false;
    *wrong += wrongElements(in, r.prev, r.number, r.rank);
    return true;
  });
});

// Blocking sends before blocking receives, no group: each send fits the FIFO, so it completes before its receiver
// comes (as with NCCL's buffers); none may wait for the receiver, which is itself sending. Connections are made on
// first use, each needing its far end (both ranks sending first would wait for each other there, before any data
// moves): round 0, a group exchange of one element, makes both directions first.
const bool kExchange = registerChild("exchange_without_group", [](int rank, int nranks,
                                                                  const std::vector<std::string>&) {
  return eachCount(rank, nranks, {1, 65536, 131072 + 5, 262144}, [](const Round& r, size_t* wrong) {
    const std::vector<int32_t> out = pattern(r.rank, r.number, r.count);
    std::vector<int32_t> in(r.count, -1);
    if (r.number == 0) {
      if (!groupExchange(r, out.data(), in.data(), r.count)) return false;
    } else {
      if (!ok(chorusSend(out.data(), r.count, chorusInt32, r.next, r.comm, nullptr), r.comm, r.rank, "chorusSend") ||
          !ok(chorusRecv(in.data(), r.count, chorusInt32, r.prev, r.comm, nullptr), r.comm, r.rank, "chorusRecv")) {
        return false;
      }
    }
    *wrong += wrongElements(in, r.prev, r.number, r.rank);
    return true;
  });
});

// Rank 0 sends to rank 1. The receiver waits first in the first three rounds (rank 0 sleeps before sending), so the
// sends find it announced; the sender goes first in the last three. Sizes below and above the FIFO's capacity.
const bool kReceiverFirst = registerChild("receiver_first", [](int rank, int nranks, const std::vector<std::string>&) {
  const std::vector<size_t> counts = {65536, 200003, 786432 + 1, 65536, 200003, 786432 + 1};
  return eachCount(rank, nranks, counts, [](const Round& r, size_t* wrong) {
    const bool receiverFirst = r.number < 3;
    if (r.rank == 0) {
      if (receiverFirst) usleep(50000);
      const std::vector<int32_t> out = pattern(0, r.number, r.count);
      return ok(chorusSend(out.data(), r.count, chorusInt32, 1, r.comm, nullptr), r.comm, r.rank, "chorusSend");
    }
    if (!receiverFirst) usleep(50000);
    std::vector<int32_t> in(r.count, -1);
    if (!ok(chorusRecv(in.data(), r.count, chorusInt32, 0, r.comm, nullptr), r.comm, r.rank, "chorusRecv"))
      return false;
    *wrong += wrongElements(in, 0, r.number, r.rank);
    return true;
  });
});

// nccl-tests' in-place send/recv: one buffer sent to the next rank and received into from the previous, in one group.
// A send whose buffer a receive of the same group overwrites never goes by reference (the peer would read bytes
// already overwritten); through the slots, every send of up to the FIFO's capacity is copied out before anything
// arrives, since each pass of the engine sends first.
const bool kInPlace = registerChild("in_place_ring", [](int rank, int nranks, const std::vector<std::string>&) {
  return eachCount(rank, nranks, {65536, 200003, 262144}, [](const Round& r, size_t* wrong) {
    std::vector<int32_t> buf = pattern(r.rank, r.number, r.count);
    if (!groupExchange(r, buf.data(), buf.data(), r.count)) return false;
    *wrong += wrongElements(buf, r.prev, r.number, r.rank);
    return true;
  });
});

// A buffer from chorusMemAlloc, freed when it goes: peers on the host map such memory and read it straight from here
// (base/shared_alloc.h), by default from 64 KiB whether or not this machine's CMA reads are fast.
struct SharedBuffer {
  explicit SharedBuffer(size_t count) : count(count) {
    if (chorusMemAlloc(reinterpret_cast<void**>(&data), std::max<size_t>(count, 1) * sizeof(int32_t)) !=
        chorusSuccess) {
      data = nullptr;
    }
  }
  ~SharedBuffer() { chorusMemFree(data); }
  SharedBuffer(const SharedBuffer&) = delete;
  SharedBuffer& operator=(const SharedBuffer&) = delete;
  std::vector<int32_t> copy() const { return std::vector<int32_t>(data, data + count); }
  int32_t* data = nullptr;
  size_t count;
};

// The group ring, sending from and receiving into chorusMemAlloc buffers.
const bool kGroupRingShared =
    registerChild("group_ring_shared", [](int rank, int nranks, const std::vector<std::string>&) {
      return eachCount(rank, nranks, mixedCounts(), [](const Round& r, size_t* wrong) {
        SharedBuffer out(r.count), in(r.count);
        if (out.data == nullptr || in.data == nullptr) return ok(chorusInternalError, r.comm, r.rank, "chorusMemAlloc");
        const std::vector<int32_t> want = pattern(r.rank, r.number, r.count);
        std::copy(want.begin(), want.end(), out.data);
        std::fill(in.data, in.data + r.count, -1);
        if (!groupExchange(r, out.data, in.data, r.count)) return false;
        *wrong += wrongElements(in.copy(), r.prev, r.number, r.rank);
        return true;
      });
    });

// All-to-all out of chorusMemAlloc buffers, out of place (the blocks to peers may go by reference) and in place (they
// never do): block counts on both sides of 64 KiB.
const bool kAllToAllShared =
    registerChild("alltoall_shared", [](int rank, int nranks, const std::vector<std::string>&) {
      const std::vector<size_t> counts = {1, 16383, 16384, 16385, 65536 + 7, 300001, 16384};
      return eachCount(rank, nranks, counts, [nranks](const Round& r, size_t* wrong) {
        const size_t total = r.count * nranks;
        SharedBuffer send(total), recv(total);
        if (send.data == nullptr || recv.data == nullptr)
          return ok(chorusInternalError, r.comm, r.rank, "chorusMemAlloc");
        // Block p of rank r's input is pattern(r, round * nranks + p): what rank p must find in block r of its output.
        auto fillBlocks = [&](int32_t* buf) {
          for (int p = 0; p < nranks; ++p) {
            const std::vector<int32_t> v = pattern(r.rank, r.number * nranks + p, r.count);
            std::copy(v.begin(), v.end(), buf + p * r.count);
          }
        };
        auto checkBlocks = [&](const int32_t* buf) {
          for (int p = 0; p < nranks; ++p) {
            *wrong += wrongElements(std::vector<int32_t>(buf + p * r.count, buf + (p + 1) * r.count), p,
                                    r.number * nranks + r.rank, r.rank);
          }
        };
        fillBlocks(send.data);
        std::fill(recv.data, recv.data + total, -1);
        if (!ok(chorusAlltoAll(send.data, recv.data, r.count, chorusInt32, r.comm, nullptr), r.comm, r.rank,
                "chorusAlltoAll")) {
          return false;
        }
        checkBlocks(recv.data);
        fillBlocks(send.data);
        if (!ok(chorusAlltoAll(send.data, send.data, r.count, chorusInt32, r.comm, nullptr), r.comm, r.rank,
                "chorusAlltoAll in place")) {
          return false;
        }
        checkBlocks(send.data);
        return true;
      });
    });

// By default references are taken only where this machine's CMA reads are fast (transport/cma.h,
// cmaReadsFast): unless `env` says otherwise or `asMeasured` asks for that default, the cases run with the threshold
// set to the default's 64 KiB, so that they cover references on every machine.
void expectAllPass(const char* child, int nranks, const std::map<std::string, std::string>& env = {},
                   bool asMeasured = false) {
  ChildOptions opt;
  opt.timeoutSec = 120;
  opt.env = env;
  if (!asMeasured && env.count("CHORUS_P2P_CMA_MIN_BYTES") == 0) opt.env["CHORUS_P2P_CMA_MIN_BYTES"] = "65536";
  // A send that waited for a receiver busy sending would fail at this deadline instead of hanging the test.
  opt.env["CHORUS_TIMEOUT_MS"] = "30000";
  auto results = runChildren(child, nranks, opt);
  for (size_t r = 0; r < results.size(); ++r) EXPECT_EQ(results[r].exitCode, 0) << child << ", rank " << r;
}

TEST(P2pSingleCopyProcs, GroupRingOf2And3) {
  expectAllPass("group_ring", 2);
  expectAllPass("group_ring", 3);
}

// The threshold as this machine's measurement sets it (references from 64 KiB, or none).
TEST(P2pSingleCopyProcs, GroupRingAsMeasured) {
  expectAllPass("group_ring", 2, {}, /*asMeasured=*/true);
  expectAllPass("group_ring", 3, {}, /*asMeasured=*/true);
}

// From the first byte by reference: every transfer of 4 bytes or more whose receiver waits.
TEST(P2pSingleCopyProcs, GroupRingWithEveryTransferEligible) {
  expectAllPass("group_ring", 2, {{"CHORUS_P2P_CMA_MIN_BYTES", "4"}});
}

// The same through the slots only: the numbering of transfers is not disturbed when no reference is taken.
TEST(P2pSingleCopyProcs, GroupRingWithoutCma) {
  expectAllPass("group_ring", 2, {{"CHORUS_CMA_DISABLE", "1"}});
}

// Buffers from chorusMemAlloc: references by default (the peer maps the sender's buffer), whatever CMA costs here.
TEST(P2pSingleCopyProcs, GroupRingFromSharedBuffers) {
  expectAllPass("group_ring_shared", 2, {}, /*asMeasured=*/true);
  expectAllPass("group_ring_shared", 3, {}, /*asMeasured=*/true);
}

TEST(P2pSingleCopyProcs, AllToAllFromSharedBuffers) {
  expectAllPass("alltoall_shared", 2, {}, /*asMeasured=*/true);
  expectAllPass("alltoall_shared", 3, {}, /*asMeasured=*/true);
}

TEST(P2pSingleCopyProcs, SendsThatFitTheFifoStillCompleteWithoutTheirReceiver) {
  expectAllPass("exchange_without_group", 2);
  expectAllPass("exchange_without_group", 3);
}

TEST(P2pSingleCopyProcs, InPlaceExchangeUpToTheFifo) {
  expectAllPass("in_place_ring", 2);
}

TEST(P2pSingleCopyProcs, ReceiverFirstAndSenderFirst) {
  expectAllPass("receiver_first", 2);
}

}  // namespace
}  // namespace chorus::test

CHORUS_TEST_MAIN()
