// Host communicators as threads of one test, made through the public API as most programs make them
// (chorusGetUniqueId + chorusCommInitRankConfig, every rank on its own thread).
#pragma once

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "chorus/chorus.h"

namespace chorus::test {

// n ranks of one new communicator, with `config` (nullptr: the defaults); a failed init fails the test.
inline std::vector<chorusComm_t> initThreads(int n, chorusConfig_t* config = nullptr) {
  chorusUniqueId id;
  EXPECT_EQ(chorusGetUniqueId(&id), chorusSuccess);
  std::vector<chorusComm_t> comms(n, nullptr);
  std::vector<chorusResult_t> rcs(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] { rcs[r] = chorusCommInitRankConfig(&comms[r], n, id, r, config); });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) EXPECT_EQ(rcs[r], chorusSuccess) << chorusGetLastError(nullptr);
  return comms;
}

}  // namespace chorus::test
