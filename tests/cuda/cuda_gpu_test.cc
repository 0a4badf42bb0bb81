// The CUDA executor on a GPU (label gpu): every test skips with the runtime's reason when no GPU is visible.
// Ranks are threads of this process, all on device 0 (several ranks per GPU), each with its own stream.
// cuda_coll_gpu_test.cc runs the other collectives and send/recv; docs/cuda.md has the runs on a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "chorus/chorus.h"
#include "common/test_data.h"
#include "cuda/gpu_ranks.h"

namespace {

using chorus::test::destroyComms;
using chorus::test::makeDeviceComms;
using chorus::test::onRanks;

struct SweepCase {
  int nranks;
  chorusDataType_t type;
  chorusRedOp_t op;
  size_t count;
  bool inPlace;
};

// Runs one all-reduce case on fresh communicators and checks every element of every rank's result.
void checkAllReduce(const SweepCase& c) {
  std::vector<chorusComm_t> comms = makeDeviceComms(c.nranks);
  const size_t bytes = c.count * chorus::test::typeSize(c.type);
  struct Rank {
    cudaStream_t s = nullptr;
    char* host = nullptr;  // pinned: copies on the stream never block the thread
    void* in = nullptr;
    void* out = nullptr;
  };
  std::vector<Rank> ranks(c.nranks);
  // Three phases, each on every rank's thread and joined before the next: nothing is allocated, freed or copied
  // from pageable memory while a rank's kernel may wait for another rank's launch (such calls can block a thread
  // on work of the whole device, and the launch it would block is the one the kernel waits for).
  onRanks(c.nranks, [&](int r) {
    Rank& k = ranks[r];
    cudaSetDevice(0);
    ASSERT_EQ(cudaStreamCreateWithFlags(&k.s, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaMallocHost(&k.host, bytes + 1), cudaSuccess);
    chorus::test::fillInput(k.host, c.type, c.op, r, c.count, 7);
    ASSERT_EQ(cudaMalloc(&k.in, bytes + 16), cudaSuccess);
    k.out = k.in;
    if (!c.inPlace) {
      ASSERT_EQ(cudaMalloc(&k.out, bytes + 16), cudaSuccess);
    }
    ASSERT_EQ(cudaMemcpyAsync(k.in, k.host, bytes, cudaMemcpyHostToDevice, k.s), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(k.s), cudaSuccess);
  });
  onRanks(c.nranks, [&](int r) {
    Rank& k = ranks[r];
    cudaSetDevice(0);
    ASSERT_EQ(chorusAllReduce(k.in, k.out, c.count, c.type, c.op, comms[r], k.s), chorusSuccess);
    ASSERT_EQ(cudaMemcpyAsync(k.host, k.out, bytes, cudaMemcpyDeviceToHost, k.s), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(k.s), cudaSuccess);
  });
  for (int r = 0; r < c.nranks; ++r) {
    Rank& k = ranks[r];
    std::string first;
    size_t wrong = chorus::test::countWrong(
        k.host, c.type, c.op, c.nranks, c.count,
        [&](size_t i) { return chorus::test::expectedReduce(c.type, c.op, c.nranks, i, 7); }, &first);
    EXPECT_EQ(wrong, 0u) << "rank " << r << ": " << first;
    cudaFree(k.in);
    if (!c.inPlace) cudaFree(k.out);
    cudaFreeHost(k.host);
    cudaStreamDestroy(k.s);
  }
  destroyComms(comms);
}

class DeviceAllReduce : public ::testing::TestWithParam<SweepCase> {};

TEST_P(DeviceAllReduce, MatchesReference) {
  REQUIRE_GPU();
  checkAllReduce(GetParam());
}

// The direct algorithm in a kernel: the tuner does not pick it for CUDA communicators until this passes on a
// GPU (TuningContext::directByModel); CHORUS_ALGO=direct, read when the communicators are made, forces it.
// Small buffers (a message must fit one FIFO slot), every type and op, in place (the own contribution then
// comes from a staging copy) and out of place.
class DeviceDirectAllReduce : public ::testing::TestWithParam<SweepCase> {};

TEST_P(DeviceDirectAllReduce, MatchesReference) {
  REQUIRE_GPU();
  setenv("CHORUS_ALGO", "direct", 1);
  checkAllReduce(GetParam());
  unsetenv("CHORUS_ALGO");
}

std::vector<SweepCase> smallSweep() {
  std::vector<SweepCase> v;
  for (int n : {2, 3, 4}) {
    for (int t = 0; t < chorusNumTypes; ++t) {
      for (int op = 0; op < chorusNumOps; ++op) {
        for (size_t count : {size_t(1), size_t(1021)}) {
          for (bool inPlace : {false, true}) {
            v.push_back({n, static_cast<chorusDataType_t>(t), static_cast<chorusRedOp_t>(op), count, inPlace});
          }
        }
      }
    }
  }
  return v;
}

std::string caseName(const ::testing::TestParamInfo<SweepCase>& i) {
  return "n" + std::to_string(i.param.nranks) + "_" + chorus::test::typeName(i.param.type) + "_" +
         chorus::test::opName(i.param.op) + "_c" + std::to_string(i.param.count) + (i.param.inPlace ? "_inplace" : "");
}

std::vector<SweepCase> sweep() {
  std::vector<SweepCase> v;
  for (int n : {1, 2, 3, 4}) {
    for (int t = 0; t < chorusNumTypes; ++t) {
      for (int op = 0; op < chorusNumOps; ++op) {
        for (size_t count : {size_t(0), size_t(1), size_t(1021), size_t(1) << 20}) {
          for (bool inPlace : {false, true}) {
            v.push_back({n, static_cast<chorusDataType_t>(t), static_cast<chorusRedOp_t>(op), count, inPlace});
          }
        }
      }
    }
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Sweep, DeviceAllReduce, ::testing::ValuesIn(sweep()), caseName);
INSTANTIATE_TEST_SUITE_P(Small, DeviceDirectAllReduce, ::testing::ValuesIn(smallSweep()), caseName);

TEST(DeviceBadInput, HostPointerOnACudaCommunicatorIsInvalidArgument) {
  REQUIRE_GPU();
  std::vector<chorusComm_t> comms = makeDeviceComms(1);
  std::vector<float> host(16);
  EXPECT_EQ(chorusAllReduce(host.data(), host.data(), 16, chorusFloat32, chorusSum, comms[0], nullptr),
            chorusInvalidArgument);
  EXPECT_NE(std::string(chorusGetLastError(comms[0])).find("sendbuff"), std::string::npos)
      << chorusGetLastError(comms[0]);
  destroyComms(comms);
}

// Rank 1 never calls: rank 0's kernel waits in its FIFO until chorusCommAbort raises the abort word.
TEST(DeviceAbort, KernelWaitingOnAnAbsentRankEnds) {
  REQUIRE_GPU();
  // A short deadline: no wait of this test may block for the default 10 minutes.
  std::vector<chorusComm_t> comms = makeDeviceComms(2, 20000);
  cudaSetDevice(0);
  const size_t count = (1 << 20) / 4;
  std::vector<cudaStream_t> streams(2);
  std::vector<float*> bufs(2);
  for (int r = 0; r < 2; ++r) {
    cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking);
    cudaMalloc(&bufs[r], count * sizeof(float));
  }
  // Both ranks complete one operation first, so the connections exist: otherwise rank 0's next call would
  // block on the host building them, waiting for rank 1, before any kernel runs.
  onRanks(2, [&](int r) {
    EXPECT_EQ(chorusAllReduce(bufs[r], bufs[r], count, chorusFloat32, chorusSum, comms[r], streams[r]), chorusSuccess);
    EXPECT_EQ(cudaStreamSynchronize(streams[r]), cudaSuccess);
  });
  // Now rank 0 alone: its kernel waits for rank 1, which never calls.
  ASSERT_EQ(chorusAllReduce(bufs[0], bufs[0], count, chorusFloat32, chorusSum, comms[0], streams[0]), chorusSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(cudaStreamQuery(streams[0]), cudaErrorNotReady);  // still waiting for rank 1
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(chorusCommAbort(comms[0]), chorusSuccess);
  EXPECT_EQ(cudaStreamSynchronize(streams[0]), cudaSuccess);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  comms[0] = nullptr;
  destroyComms(comms);
  for (int r = 0; r < 2; ++r) {
    cudaFree(bufs[r]);
    cudaStreamDestroy(streams[r]);
  }
}

}  // namespace
