#include "core/host_stream.h"

#include <unordered_set>

#include "base/error.h"

namespace chorus::core {

HostStream::HostStream() : thread_([this] { loop(); }) {}

HostStream::~HostStream() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    idleCv_.wait(lock, [this] { return pending_ == 0; });
    stop_ = true;
  }
  workCv_.notify_all();
  thread_.join();
}

void HostStream::enqueue(std::vector<CommWork> works) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(works));
    ++pending_;
    wake = workerWaiting_;
  }
  if (wake) workCv_.notify_one();
}

bool HostStream::runFront(std::unique_lock<std::mutex>& lock) {
  if (running_ || queue_.empty()) return false;
  std::vector<CommWork> works = std::move(queue_.front());
  queue_.pop_front();
  running_ = true;
  lock.unlock();
  LaunchResult r = executeLaunch(works);
  lock.lock();
  running_ = false;
  if (r.status != Status::kSuccess && firstError_.status == Status::kSuccess) firstError_ = r;
  --pending_;
  // Only an empty stream interests a waiter (the next launch, if any, runs on this thread): a wake-up per
  // launch would cost a context switch each when ranks outnumber cores.
  if (pending_ == 0) idleCv_.notify_all();
  return true;
}

void HostStream::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (runFront(lock)) continue;
    if (stop_ && queue_.empty()) return;
    workerWaiting_ = true;
    workCv_.wait(lock);
    workerWaiting_ = false;
  }
}

LaunchResult HostStream::takeError() {
  LaunchResult r = firstError_;
  firstError_ = LaunchResult{};
  return r;
}

LaunchResult HostStream::synchronize() {
  std::unique_lock<std::mutex> lock(mu_);
  while (pending_ != 0) {
    // Work the stream's thread has not started yet runs here, in order: a caller that synchronizes right
    // after enqueueing (the common training-loop pattern) then pays no thread hand-off at all.
    if (runFront(lock)) continue;
    idleCv_.wait(lock);
  }
  return takeError();
}

LaunchResult HostStream::query() {
  std::lock_guard<std::mutex> lock(mu_);
  if (firstError_.status != Status::kSuccess) return takeError();
  if (pending_ != 0) return LaunchResult{Status::kInProgress, ""};
  return LaunchResult{};
}

namespace {
std::mutex registryMu;
std::unordered_set<const void*>& registry() {
  static auto* s = new std::unordered_set<const void*>();
  return *s;
}
}  // namespace

void registerStream(HostStream* s) {
  std::lock_guard<std::mutex> lock(registryMu);
  registry().insert(s);
}

void unregisterStream(HostStream* s) {
  std::lock_guard<std::mutex> lock(registryMu);
  registry().erase(s);
}

HostStream* checkStream(void* handle, const char* arg) {
  if (handle == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(registryMu);
  CHORUS_CHECK_ARG(registry().count(handle) != 0, arg,
                   " is not a live host stream (create it with chorusStreamCreate; CUDA streams need a CUDA "
                   "communicator)");
  return static_cast<HostStream*>(handle);
}

}  // namespace chorus::core
