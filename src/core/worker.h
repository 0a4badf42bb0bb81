// A thread that runs submitted jobs one at a time, and a way to wait for them. Each communicator has one,
// created on first use, so that a group spanning several communicators runs every communicator's share at
// the same time (their ranks wait on each other).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace chorus::core {

class Worker {
 public:
  Worker();
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Runs job on the worker thread (after the jobs submitted before it).
  void submit(std::function<void()> job);

 private:
  void loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stop_ = false;
  std::thread thread_;
};

// Counts finished jobs; wait() returns when `expected` have finished.
class Latch {
 public:
  explicit Latch(int expected) : left_(expected) {}
  void countDown();
  void wait();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int left_;
};

}  // namespace chorus::core
