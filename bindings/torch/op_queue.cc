#include "op_queue.h"

#include <c10/util/Exception.h>

#include "chorus_error.h"

namespace chorus_torch {

OpQueue::OpQueue(chorusComm_t comm, int rank, int64_t timeoutMs) : comm_(comm), rank_(rank), timeoutMs_(timeoutMs) {
  checkChorus(chorusStreamCreate(&stream_), comm_, "chorus: creating the process group's host stream");
}

OpQueue::~OpQueue() {
  shutdown();
}

std::string OpQueue::failure() {
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

c10::intrusive_ptr<ChorusWork> OpQueue::submit(OpPlan plan) {
  const bool defer = plan.pointToPoint;
  auto work = c10::make_intrusive<ChorusWork>(rank_, std::move(plan), shared_from_this());
  {
    std::lock_guard<std::mutex> lock(mu_);
    TORCH_CHECK(!shutDown_, "chorus: the process group was destroyed");
    TORCH_CHECK(failure_.empty(), "chorus: the communicator failed earlier and cannot be used: ", failure_);
    if (defer || coalescing_) {
      deferred_.push_back(work);
      return work;
    }
  }
  flushDeferred();
  // Host steps read or write user tensors: earlier operations (and their epilogues) must be done first.
  bool mustDrain = work->plan_.needsOrder();
  if (!mustDrain) {
    std::lock_guard<std::mutex> lock(mu_);
    mustDrain = hasEpiloguePendingLocked();
  }
  if (mustDrain) drain();
  std::lock_guard<std::mutex> lock(mu_);
  TORCH_CHECK(failure_.empty(), "chorus: the communicator failed earlier and cannot be used: ", failure_);
  issueLocked({work});
  return work;
}

c10::intrusive_ptr<ChorusWork> OpQueue::runNow(OpPlan plan, const std::function<void(chorusComm_t comm)>& body) {
  drain();
  auto work = c10::make_intrusive<ChorusWork>(rank_, std::move(plan), shared_from_this());
  {
    std::lock_guard<std::mutex> lock(mu_);
    TORCH_CHECK(!shutDown_, "chorus: the process group was destroyed");
    TORCH_CHECK(failure_.empty(), "chorus: the communicator failed earlier and cannot be used: ", failure_);
    try {
      body(comm_);
    } catch (const std::exception& e) {
      // A failed call leaves the communicator unusable, as a failed launch does.
      chorusResult_t async = chorusSuccess;
      if (chorusCommGetAsyncError(comm_, &async) == chorusSuccess && async != chorusSuccess &&
          async != chorusInProgress) {
        failure_ = e.what();
      }
      throw;
    }
  }
  work->finishOnQueue(nullptr);
  work->completeFuture();
  return work;
}

bool OpQueue::hasEpiloguePendingLocked() const {
  return epiloguesPending_ > 0;
}

void OpQueue::issueLocked(const std::vector<c10::intrusive_ptr<ChorusWork>>& works) {
  const bool grouped = works.size() > 1 || works[0]->plan_.pointToPoint || works[0]->plan_.groupCalls;
  for (const auto& w : works) {
    if (w->plan_.prologue) w->plan_.prologue();
  }
  if (grouped) checkChorus(chorusGroupStart(), comm_, "chorus: chorusGroupStart");
  try {
    for (const auto& w : works) w->plan_.issue(comm_, stream_);
  } catch (...) {
    // The group's recorded error makes chorusGroupEnd launch nothing.
    if (grouped) (void)chorusGroupEnd();
    throw;
  }
  if (grouped) checkChorus(chorusGroupEnd(), comm_, "chorus: chorusGroupEnd");
  for (const auto& w : works) {
    w->seq_ = ++issued_;
    if (w->plan_.epilogue) ++epiloguesPending_;
    pending_.push_back(w);
  }
}

void OpQueue::flushDeferred() {
  std::vector<c10::intrusive_ptr<ChorusWork>> batch;
  bool mustDrain = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (deferred_.empty() || coalescing_) return;
    batch.swap(deferred_);
    for (const auto& w : batch) mustDrain = mustDrain || w->plan_.needsOrder();
    mustDrain = mustDrain || hasEpiloguePendingLocked();
  }
  if (mustDrain) drain();
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(mu_);
    try {
      TORCH_CHECK(failure_.empty(), "chorus: the communicator failed earlier and cannot be used: ", failure_);
      issueLocked(batch);
      return;
    } catch (...) {
      error = std::current_exception();
    }
  }
  // Nobody called these works' issuing function just now: their waits report the error.
  for (const auto& w : batch) w->finishOnQueue(error);
  for (const auto& w : batch) w->completeFuture();
}

bool OpQueue::complete(uint64_t target, bool block) {
  std::unique_lock<std::mutex> sync(syncMu_, std::defer_lock);
  if (block) {
    sync.lock();
  } else if (!sync.try_lock()) {
    return completed_.load() >= target;
  }
  if (completed_.load() >= target) return true;
  uint64_t snapshot;
  {
    std::lock_guard<std::mutex> lock(mu_);
    snapshot = issued_;
    if (stream_ == nullptr) return completed_.load() >= target;  // shut down: everything completed already
  }
  chorusResult_t rc = block ? chorusStreamSynchronize(stream_) : chorusStreamQuery(stream_);
  if (rc == chorusInProgress) return false;
  std::string message;
  if (rc != chorusSuccess) {
    message = chorusMessage(rc, comm_);
    // Gloo's word for it, which scripts (and PyTorch's tests) look for.
    if (rc == chorusTimeout) {
      message = "Timed out after " + std::to_string(timeoutMs_) + " ms (the process group's timeout): " + message;
    }
    // A query reports an error while later launches may still run on the user's buffers: wait for the stream
    // to empty (they fail fast once the communicator's connections are poisoned) before declaring them done.
    if (!block) (void)chorusStreamSynchronize(stream_);
  }
  std::vector<c10::intrusive_ptr<ChorusWork>> finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    while (!pending_.empty() && pending_.front()->seq_ <= snapshot) {
      if (pending_.front()->plan_.epilogue) --epiloguesPending_;
      finished.push_back(std::move(pending_.front()));
      pending_.pop_front();
    }
    if (rc != chorusSuccess && failure_.empty()) failure_ = message;
  }
  std::exception_ptr error;
  if (rc != chorusSuccess) error = std::make_exception_ptr(std::runtime_error("chorus: " + message));
  for (const auto& w : finished) w->finishOnQueue(error);
  completed_.store(snapshot);
  sync.unlock();
  // Future callbacks may issue and wait on further operations: they run with no lock held.
  for (const auto& w : finished) w->completeFuture();
  return snapshot >= target;
}

uint64_t OpQueue::issueNumber(ChorusWork& work) {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (work.seq_ != 0) return work.seq_;
      TORCH_CHECK(!coalescing_, "chorus: wait, query or future of an operation inside a coalescing block");
    }
    flushDeferred();
    std::lock_guard<std::mutex> lock(mu_);
    if (work.seq_ != 0) return work.seq_;
    // Its batch failed to issue (the work is complete with that error), or another thread is issuing it.
    if (work.c10d::Work::isCompleted()) return 0;
    std::this_thread::yield();
  }
}

void OpQueue::wait(ChorusWork& work) {
  const uint64_t seq = issueNumber(work);
  while (seq != 0 && !complete(seq, true)) {
  }
}

bool OpQueue::poll(ChorusWork& work) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (work.seq_ == 0 && coalescing_) return false;
  }
  const uint64_t seq = issueNumber(work);
  if (seq == 0) return true;
  return completed_.load() >= seq || complete(seq, false);
}

void OpQueue::watch(ChorusWork& work) {
  const uint64_t seq = issueNumber(work);
  if (seq == 0 || completed_.load() >= seq) return;
  std::lock_guard<std::mutex> lock(watchMu_);
  if (stopCompleter_) return;
  if (seq > watchUpTo_) watchUpTo_ = seq;
  if (!completer_.joinable()) completer_ = std::thread([this] { completerLoop(); });
  watchCv_.notify_one();
}

void OpQueue::completerLoop() {
  std::unique_lock<std::mutex> lock(watchMu_);
  for (;;) {
    watchCv_.wait(lock, [this] { return stopCompleter_ || watchUpTo_ > completed_.load(); });
    if (stopCompleter_) return;
    const uint64_t target = watchUpTo_;
    lock.unlock();
    try {
      complete(target, true);
    } catch (const std::exception& e) {
      // complete() reports operation failures through the works; anything else is a bug worth a log line.
      TORCH_WARN("chorus: completer thread: ", e.what());
    }
    lock.lock();
  }
}

void OpQueue::drain() {
  flushDeferred();
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(mu_);
    target = issued_;
  }
  while (completed_.load() < target && !complete(target, true)) {
  }
}

void OpQueue::startCoalescing() {
  flushDeferred();
  std::lock_guard<std::mutex> lock(mu_);
  TORCH_CHECK(!coalescing_, "chorus: startCoalescing inside a coalescing block");
  coalescing_ = true;
}

void OpQueue::endCoalescing() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    TORCH_CHECK(coalescing_, "chorus: endCoalescing without startCoalescing");
    coalescing_ = false;
  }
  flushDeferred();
}

void OpQueue::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shutDown_) return;
    coalescing_ = false;
  }
  try {
    drain();
  } catch (const std::exception& e) {
    TORCH_WARN("chorus: completing the process group's operations at destruction: ", e.what());
  }
  {
    std::lock_guard<std::mutex> lock(watchMu_);
    stopCompleter_ = true;
  }
  watchCv_.notify_all();
  if (completer_.joinable()) {
    if (completer_.get_id() == std::this_thread::get_id()) {
      completer_.detach();
    } else {
      completer_.join();
    }
  }
  std::lock_guard<std::mutex> sync(syncMu_);
  std::string failure;
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutDown_ = true;
    failure = failure_;
  }
  (void)chorusStreamDestroy(stream_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stream_ = nullptr;
  }
  if (failure.empty()) {
    // Flushes sends still in flight, so that their receivers get the data after this rank is gone.
    (void)chorusCommFinalize(comm_);
    (void)chorusCommDestroy(comm_);
  } else {
    (void)chorusCommAbort(comm_);
  }
  comm_ = nullptr;
}

}  // namespace chorus_torch
