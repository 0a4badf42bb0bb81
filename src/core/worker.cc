#include "core/worker.h"

#include "base/sched_policy.h"

namespace chorus::core {

Worker::Worker() : thread_([this] { loop(); }) {}

Worker::~Worker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

void Worker::submit(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void Worker::loop() {
  leaveInheritedBatch();  // a group's share runs at once when submitted, even when a host stream's thread created this
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

void Latch::countDown() {
  std::lock_guard<std::mutex> lock(mu_);
  if (--left_ == 0) cv_.notify_all();
}

void Latch::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return left_ <= 0; });
}

}  // namespace chorus::core
