// Ranks as threads on one GPU, for the GPU tests: communicators on device 0 made from one thread per rank, and
// a helper that runs a function on one thread per rank. Every GPU test starts with REQUIRE_GPU().
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "common/gpu_presence.h"
#include "common/on_threads.h"

// Skips the test when there is no GPU at all; fails it when one should be usable (common/gpu_presence.h).
#define REQUIRE_GPU()                                                                              \
  do {                                                                                             \
    int n_ = 0;                                                                                    \
    cudaError_t e_ = cudaGetDeviceCount(&n_);                                                      \
    if (e_ != cudaSuccess || n_ == 0) {                                                            \
      CHORUS_SKIP_OR_FAIL_WITHOUT_GPU(std::string("no CUDA device visible: ") +                    \
                                      (e_ != cudaSuccess ? cudaGetErrorString(e_) : "0 devices")); \
    }                                                                                              \
  } while (0)

namespace chorus::test {

// Runs fn(rank) on one thread per rank and joins them.
inline void onRanks(int nranks, const std::function<void(int)>& fn) {
  onThreads(nranks, fn);
}

// nranks communicators on device 0, made from one thread per rank; timeoutMs: their deadline (0: the default).
inline std::vector<chorusComm_t> makeDeviceComms(int nranks, int timeoutMs = 0) {
  chorusUniqueId id;
  EXPECT_EQ(chorusGetUniqueId(&id), chorusSuccess);
  std::vector<chorusComm_t> comms(nranks, nullptr);
  onRanks(nranks, [&](int r) {
    chorusConfig_t cfg = CHORUS_CONFIG_INITIALIZER;
    cfg.device = 0;
    if (timeoutMs > 0) cfg.timeoutMs = timeoutMs;
    EXPECT_EQ(chorusCommInitRankConfig(&comms[r], nranks, id, r, &cfg), chorusSuccess);
  });
  return comms;
}

// Destroys every communicator that is not null.
inline void destroyComms(std::vector<chorusComm_t>& comms) {
  for (chorusComm_t c : comms) {
    if (c != nullptr) chorusCommDestroy(c);
  }
}

}  // namespace chorus::test
