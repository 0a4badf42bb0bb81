// One case of the collective sweep (tests/coll/sweep.h) on one rank's device buffers, in the three steps the GPU
// tests run it in: fill (the input copied from pinned host memory), call (the collective, then both buffers
// copied back on the rank's stream), check (every element and the guard bytes, on the host). Ranks as threads
// of one process join each step across the ranks before the next (cuda_coll_gpu_test.cc says why); ranks as
// processes run the three in a row (cuda_procs_gpu_test.cc).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "chorus/chorus.h"
#include "coll/sweep.h"

namespace chorus::test {

// One rank's buffers: device send and receive buffers with their pinned host images, each with room for a guard
// after the largest case it will run. A case uses the first bytes of each and writes the guard right after them.
struct DeviceRankBuffers {
  cudaStream_t stream = nullptr;
  char* devSend = nullptr;
  char* devRecv = nullptr;
  char* hostSend = nullptr;
  char* hostRecv = nullptr;

  // Allocates buffers of `bytes` (plus the guard) on the current device; "" or what failed.
  std::string allocate(size_t bytes);
  void release();
};

// Writes the case's host images (zeroed receive buffer, rank's input placed as the collective wants it, guards
// after both) and copies both whole to the device, so that in-place layouts alias there as here; "" or an error.
std::string fillDeviceCase(const CollCase& c, int rank, int nranks, DeviceRankBuffers& b);

// Calls the collective on the device buffers and copies both back; "" or an error.
std::string callDeviceCase(const CollCase& c, int rank, int nranks, chorusComm_t comm, DeviceRankBuffers& b);

// Checks the copied-back images: "" or the failure, described.
std::string checkDeviceCase(const CollCase& c, int rank, int nranks, const DeviceRankBuffers& b);

}  // namespace chorus::test
