// Every collective but all-reduce (cuda_gpu_test.cc has it) and send/recv on device buffers (label gpu): ranks are
// threads of this process on device 0, each with its own stream. One test per collective, rank count and type
// runs every reduction, count, root and placement of the host sweep (tests/coll/sweep.h) on one set of
// communicators, and checks every element each rank holds and the guard bytes after both of its buffers.
//
// Each case runs in the three steps of cuda/device_case.h, joined across the rank threads: nothing is allocated,
// freed or copied from pageable memory while a rank's kernel may wait for another rank's launch (docs/cuda.md:
// such calls can block a thread on work of the whole device, and the launch it would block is the one the kernel
// waits for).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "coll/sweep.h"
#include "common/test_data.h"
#include "cuda/device_case.h"
#include "cuda/gpu_ranks.h"

namespace {

using chorus::test::Coll;
using chorus::test::CollCase;

// The host sweep's counts: empty, one element, odd sizes that split unevenly into chunks and slots, and one over
// a megabyte that takes several FIFO rounds.
const std::vector<size_t> kCounts = {0, 1, 7, 1021, 65537, 1048583};

struct DevCollParam {
  Coll coll;
  int nranks;
  chorusDataType_t type;
};

// Runs every case of the sweep for one collective, rank count and type; returns one line per failing case.
std::vector<std::string> runDeviceSweep(const DevCollParam& p) {
  const int n = p.nranks;
  std::vector<chorusComm_t> comms = chorus::test::makeDeviceComms(n);
  std::vector<chorus::test::DeviceRankBuffers> ranks(n);
  std::vector<std::string> errors(n);
  const size_t capacity = kCounts.back() * static_cast<size_t>(n) * chorus::test::typeSize(p.type);
  chorus::test::onRanks(n, [&](int r) {
    cudaSetDevice(0);
    errors[r] = ranks[r].allocate(capacity);
  });
  std::vector<std::string> failures;
  for (int r = 0; r < n; ++r) {
    if (!errors[r].empty()) failures.push_back("rank " + std::to_string(r) + ": " + errors[r]);
  }
  // Runs one case in three steps joined across the rank threads; false once a case has failed (a failed call can
  // leave the other ranks' kernels waiting, so the sweep stops there).
  auto runCase = [&](const CollCase& c) {
    errors.assign(n, "");
    chorus::test::onRanks(n, [&](int r) {
      cudaSetDevice(0);
      errors[r] = chorus::test::fillDeviceCase(c, r, n, ranks[r]);
    });
    chorus::test::onRanks(n, [&](int r) {
      cudaSetDevice(0);
      if (errors[r].empty()) errors[r] = chorus::test::callDeviceCase(c, r, n, comms[r], ranks[r]);
    });
    for (int r = 0; r < n; ++r) {
      if (errors[r].empty()) errors[r] = chorus::test::checkDeviceCase(c, r, n, ranks[r]);
      if (!errors[r].empty()) failures.push_back(chorus::test::describeCase(c, r) + ": " + errors[r]);
    }
    return failures.empty();
  };
  const std::vector<chorusRedOp_t> ops =
      chorus::test::reduces(p.coll) ? std::vector<chorusRedOp_t>{chorusSum, chorusProd, chorusMax, chorusMin, chorusAvg}
                                    : std::vector<chorusRedOp_t>{chorusSum};
  uint64_t seed = 1;
  bool ok = failures.empty();
  for (chorusRedOp_t op : ops) {
    for (size_t count : kCounts) {
      std::vector<int> roots = {0};
      if (chorus::test::rooted(p.coll)) {
        roots.clear();
        // Every root for small counts, the first and last for large ones (as the host sweep does).
        for (int r = 0; r < n; ++r) {
          if (count <= 100000 || r == 0 || r == n - 1) roots.push_back(r);
        }
      }
      for (int root : roots) {
        for (bool inPlace : {false, true}) {
          if (ok) ok = runCase(CollCase{p.coll, p.type, op, count, inPlace, root, seed++});
        }
      }
    }
  }
  for (chorus::test::DeviceRankBuffers& b : ranks) b.release();
  chorus::test::destroyComms(comms);
  return failures;
}

class DeviceCollective : public ::testing::TestWithParam<DevCollParam> {};

TEST_P(DeviceCollective, EveryCaseMatchesReference) {
  REQUIRE_GPU();
  std::vector<std::string> failures = runDeviceSweep(GetParam());
  for (const std::string& f : failures) ADD_FAILURE() << f;
}

// Every collective but all-reduce, at 1, 2, 3 and 5 ranks for every type, and at 8 ranks (more ranks than one
// GPU is usually shared by: their kernels must all be resident at once) for two types.
std::vector<DevCollParam> collectiveCases() {
  std::vector<DevCollParam> v;
  for (Coll coll : {Coll::kBroadcast, Coll::kReduce, Coll::kAllGather, Coll::kReduceScatter, Coll::kAllToAll,
                    Coll::kGather, Coll::kScatter}) {
    for (int n : {1, 2, 3, 5}) {
      for (int t = 0; t < chorusNumTypes; ++t) v.push_back({coll, n, static_cast<chorusDataType_t>(t)});
    }
    for (chorusDataType_t t : {chorusInt8, chorusFloat32}) v.push_back({coll, 8, t});
  }
  return v;
}

std::string collCaseName(const ::testing::TestParamInfo<DevCollParam>& i) {
  return std::string(chorus::test::collName(i.param.coll)) + "_n" + std::to_string(i.param.nranks) + "_" +
         chorus::test::typeName(i.param.type);
}

INSTANTIATE_TEST_SUITE_P(Sweep, DeviceCollective, ::testing::ValuesIn(collectiveCases()), collCaseName);

// Send/recv in a group: every rank sends two messages of different sizes to the next rank and receives two from
// the previous one (two sends to one peer in one group take consecutive slots of one FIFO: each must land in its
// own receive), for 1 (a send to oneself), 2, 3, 5 and 8 ranks and counts from 0 to beyond a FIFO.
class DeviceSendRecv : public ::testing::TestWithParam<int> {};

TEST_P(DeviceSendRecv, RingOfTwoMessagesMatches) {
  REQUIRE_GPU();
  const int n = GetParam();
  const chorusDataType_t type = chorusFloat32;
  std::vector<chorusComm_t> comms = chorus::test::makeDeviceComms(n);
  struct Pair {
    size_t first, second;
  };
  const std::vector<Pair> pairs = {{0, 1}, {1, 0}, {7, 1021}, {65537, 3}, {1048583, 65537}};
  const size_t maxElems = 1048583 + 65537 + 1;  // the largest pair and the element after it
  struct Rank {
    cudaStream_t stream = nullptr;
    float* devSend = nullptr;
    float* devRecv = nullptr;
    float* host = nullptr;
  };
  std::vector<Rank> ranks(n);
  chorus::test::onRanks(n, [&](int r) {
    cudaSetDevice(0);
    ASSERT_EQ(cudaStreamCreateWithFlags(&ranks[r].stream, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&ranks[r].devSend, maxElems * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&ranks[r].devRecv, maxElems * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMallocHost(&ranks[r].host, maxElems * sizeof(float)), cudaSuccess);
  });
  uint64_t seed = 100;
  for (const Pair& pr : pairs) {
    const size_t total = pr.first + pr.second;
    // Phase 1: the input (the two messages back to back) and a receive buffer of -1.
    chorus::test::onRanks(n, [&](int r) {
      Rank& k = ranks[r];
      cudaSetDevice(0);
      chorus::test::fillInput(k.host, type, chorusSum, r, total, seed);
      cudaMemcpyAsync(k.devSend, k.host, total * sizeof(float), cudaMemcpyHostToDevice, k.stream);
      cudaMemsetAsync(k.devRecv, 0xFF, maxElems * sizeof(float), k.stream);
      cudaStreamSynchronize(k.stream);
    });
    // Phase 2: the group, then the receive buffer back.
    chorus::test::onRanks(n, [&](int r) {
      Rank& k = ranks[r];
      cudaSetDevice(0);
      const int next = (r + 1) % n, prev = (r + n - 1) % n;
      EXPECT_EQ(chorusGroupStart(), chorusSuccess);
      EXPECT_EQ(chorusSend(k.devSend, pr.first, type, next, comms[r], k.stream), chorusSuccess);
      EXPECT_EQ(chorusSend(k.devSend + pr.first, pr.second, type, next, comms[r], k.stream), chorusSuccess);
      EXPECT_EQ(chorusRecv(k.devRecv, pr.first, type, prev, comms[r], k.stream), chorusSuccess);
      EXPECT_EQ(chorusRecv(k.devRecv + pr.first, pr.second, type, prev, comms[r], k.stream), chorusSuccess);
      EXPECT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(comms[r]);
      cudaMemcpyAsync(k.host, k.devRecv, (total + 1) * sizeof(float), cudaMemcpyDeviceToHost, k.stream);
      EXPECT_EQ(cudaStreamSynchronize(k.stream), cudaSuccess);
    });
    // Phase 3: rank r holds rank prev's two messages, and nothing after them.
    for (int r = 0; r < n; ++r) {
      const int prev = (r + n - 1) % n;
      std::string first;
      size_t wrong = chorus::test::countWrong(
          ranks[r].host, type, chorusSum, n, total,
          [&](size_t i) { return chorus::test::inputValue(type, chorusSum, prev, i, seed); }, &first);
      EXPECT_EQ(wrong, 0u) << "rank " << r << ", messages of " << pr.first << " and " << pr.second << ": " << first;
      uint32_t after = 0;
      std::memcpy(&after, ranks[r].host + total, sizeof(after));
      EXPECT_EQ(after, 0xFFFFFFFFu) << "rank " << r << " wrote past the second message";
    }
    ++seed;
  }
  for (Rank& k : ranks) {
    cudaFree(k.devSend);
    cudaFree(k.devRecv);
    cudaFreeHost(k.host);
    cudaStreamDestroy(k.stream);
  }
  chorus::test::destroyComms(comms);
}

INSTANTIATE_TEST_SUITE_P(Ranks, DeviceSendRecv, ::testing::Values(1, 2, 3, 5, 8),
                         [](const ::testing::TestParamInfo<int>& i) { return "n" + std::to_string(i.param); });

}  // namespace
