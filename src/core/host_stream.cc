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
  workCv_.notify_one();
  thread_.join();
}

void HostStream::enqueue(std::vector<CommWork> works) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(works));
    ++pending_;
  }
  workCv_.notify_one();
}

void HostStream::loop() {
  for (;;) {
    std::vector<CommWork> works;
    {
      std::unique_lock<std::mutex> lock(mu_);
      workCv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      works = std::move(queue_.front());
      queue_.pop_front();
    }
    LaunchResult r = executeLaunch(works);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (r.status != Status::kSuccess && firstError_.status == Status::kSuccess) firstError_ = r;
      --pending_;
    }
    idleCv_.notify_all();
  }
}

LaunchResult HostStream::takeError() {
  LaunchResult r = firstError_;
  firstError_ = LaunchResult{};
  return r;
}

LaunchResult HostStream::synchronize() {
  std::unique_lock<std::mutex> lock(mu_);
  idleCv_.wait(lock, [this] { return pending_ == 0; });
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
