// Ranks as threads in a test: runs fn(rank) on one thread per rank and joins them all.
#pragma once

#include <thread>
#include <vector>

namespace chorus::test {

template <typename Fn>
void onThreads(int n, Fn fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { fn(r); });
  for (auto& t : threads) t.join();
}

}  // namespace chorus::test
