// Ranks as processes on one GPU (label gpu): each rank is a process of its own, so every FIFO a rank reads was
// allocated by another process and reached through CUDA IPC (transport/cuda), and the ranks' kernels run in
// different CUDA contexts that the GPU time-slices unless MPS runs. Every collective, three types, three
// reductions, counts from one element to beyond a FIFO, the first and last root, in and out of place; every
// element of every rank checked (cuda/device_case.h).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "coll/sweep.h"
#include "common/child.h"
#include "common/gpu_presence.h"
#include "common/test_data.h"
#include "cuda/device_case.h"
#include "cuda/gpu_ranks.h"

namespace {

using chorus::test::Coll;
using chorus::test::CollCase;

// One rank: the sweep on device 0; exits 0 when every case passed, 1 at the first failing case, 100 when it
// could not start.
int deviceSweepChild(int rank, int nranks, const std::vector<std::string>&) {
  if (cudaSetDevice(0) != cudaSuccess) {
    std::fprintf(stderr, "rank %d: no usable GPU\n", rank);
    return 100;
  }
  chorusConfig_t cfg = CHORUS_CONFIG_INITIALIZER;
  cfg.device = 0;
  chorusComm_t comm = nullptr;
  if (chorusCommInitFromEnv(&comm, &cfg) != chorusSuccess) {
    std::fprintf(stderr, "rank %d: chorusCommInitFromEnv failed\n", rank);
    return 100;
  }
  const std::vector<size_t> counts = {1, 1021, 1048583};
  chorus::test::DeviceRankBuffers b;
  std::string err = b.allocate(counts.back() * static_cast<size_t>(nranks) * 8);
  if (!err.empty()) {
    std::fprintf(stderr, "rank %d: %s\n", rank, err.c_str());
    return 100;
  }
  uint64_t seed = 1;
  for (Coll coll : {Coll::kAllReduce, Coll::kBroadcast, Coll::kReduce, Coll::kAllGather, Coll::kReduceScatter,
                    Coll::kAllToAll, Coll::kGather, Coll::kScatter}) {
    for (chorusDataType_t type : {chorusFloat32, chorusBfloat16, chorusInt32}) {
      const std::vector<chorusRedOp_t> ops = chorus::test::reduces(coll)
                                                 ? std::vector<chorusRedOp_t>{chorusSum, chorusAvg, chorusMax}
                                                 : std::vector<chorusRedOp_t>{chorusSum};
      for (chorusRedOp_t op : ops) {
        for (size_t count : counts) {
          std::vector<int> roots = {0};
          if (chorus::test::rooted(coll) && nranks > 1) roots.push_back(nranks - 1);
          for (int root : roots) {
            for (bool inPlace : {false, true}) {
              const CollCase c{coll, type, op, count, inPlace, root, seed++};
              std::string e = chorus::test::fillDeviceCase(c, rank, nranks, b);
              if (e.empty()) e = chorus::test::callDeviceCase(c, rank, nranks, comm, b);
              if (e.empty()) e = chorus::test::checkDeviceCase(c, rank, nranks, b);
              if (!e.empty()) {
                std::fprintf(stderr, "%s: %s\n", chorus::test::describeCase(c, rank).c_str(), e.c_str());
                // A failed call can leave the other ranks waiting in theirs: stop here.
                b.release();
                chorusCommAbort(comm);
                return 1;
              }
            }
          }
        }
      }
    }
  }
  b.release();
  chorusCommDestroy(comm);
  return 0;
}

const bool kRegistered = chorus::test::registerChild("device_sweep", deviceSweepChild);

class DeviceProcesses : public ::testing::TestWithParam<int> {};

TEST_P(DeviceProcesses, EveryCollectiveMatchesReference) {
  REQUIRE_GPU();
  chorus::test::ChildOptions o;
  o.timeoutSec = 240;
  o.env["CHORUS_TIMEOUT_MS"] = "20000";
  const std::vector<chorus::test::ChildResult> results = chorus::test::runChildren("device_sweep", GetParam(), o);
  for (size_t r = 0; r < results.size(); ++r) EXPECT_EQ(results[r].exitCode, 0) << "rank " << r;
}

INSTANTIATE_TEST_SUITE_P(Ranks, DeviceProcesses, ::testing::Values(2, 3),
                         [](const ::testing::TestParamInfo<int>& i) { return "n" + std::to_string(i.param); });

}  // namespace

CHORUS_TEST_MAIN()
