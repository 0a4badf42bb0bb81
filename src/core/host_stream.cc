#include "core/host_stream.h"

#include <sched.h>

#include <algorithm>

#include "base/error.h"
#include "base/futex.h"
#include "base/wait.h"
#include "core/handle_registry.h"

namespace chorus::core {

namespace {
// How long a stream's thread watches for the next launch, and a synchronizer for the end of the running
// ones, before sleeping. Measured with all_reduce_perf -n 10 on 2 cores (8 B-4 KiB): 20 us took 2 ranks from
// 1.2-3.8 us per operation to 0.95-1.9 us and 4 ranks from 9.9-11.9 to 6.3-9.7 us; 100 us gained nothing more.
constexpr uint64_t kLingerNs = 20000;
// How long the stream's thread leaves a launch it found while lingering to a synchronizer before it starts it
// itself. Enqueue-then-synchronize is the common pattern, and the launch then runs on the synchronizing thread
// with no hand-off; a caller that does not synchronize at once waits this long more for its launch to start.
constexpr uint64_t kLeaveToSynchronizerNs = 2000;

// Releases the lock, yields the core until ready() or kLingerNs have passed, and takes the lock again. The
// caller re-checks its condition under the lock.
template <typename Ready>
void linger(std::unique_lock<std::mutex>& lock, Ready ready) {
  lock.unlock();
  const uint64_t end = nowNs() + kLingerNs;
  for (int i = 0; !ready(); ++i) {
    if ((i & 7) == 7 && nowNs() >= end) break;
    sched_yield();
  }
  lock.lock();
}

// Storage for a launch of one work of a few operations (a group's). The stream starts with kSpareLaunches of them
// and the running launch with one, so up to that many group launches queued at once on a new stream allocate
// nothing either: the storage circulates from the caller to a slot, to the running launch, to the spares, back to a
// caller, and an empty vector among it would cost two allocations each time it came round (a first loop of 60
// launches of a 32-byte all-reduce, 2 ranks: 0.52-0.57 us per launch with 4 empty slots, 0.46-0.54 with these).
std::vector<CommWork> preparedLaunch() {
  std::vector<CommWork> launch(1);
  launch[0].ops.reserve(4);
  return launch;
}

constexpr size_t kSpareLaunches = 64;

// Made one by one: a copy of a vector keeps its elements, not its capacity.
std::vector<std::vector<CommWork>> preparedSpares() {
  std::vector<std::vector<CommWork>> spares(kSpareLaunches);
  for (std::vector<CommWork>& launch : spares) launch = preparedLaunch();
  return spares;
}

// Slots a new stream's queue starts with (about 230 bytes each, written here: a new stream holds about 0.9 MB, and
// chorusStreamCreate takes about 0.4 ms): a loop that queues up to this many launches before it synchronizes never
// grows the ring. Growing it as the first deep queue filled it cost that loop its new memory's first touch: with 1024
// slots, 4000 all-reduces of 8 bytes queued at once (2 ranks, all_reduce_perf -n 4000) ran 0.39-0.41 us per
// operation in the first timed loop against 0.22-0.24 in the next ones, however long the warm-up before it (and
// 0.1 us slower already at -n 1000 with 64 slots). Holding the enqueuer back instead, until the stream's thread had
// freed half the ring, kept the ring small but now and then slowed the whole loop tenfold (docs/performance.md).
constexpr size_t kInitialSlots = 4096;

}  // namespace

HostStream::HostStream()
    : ring_(kInitialSlots), spares_(preparedSpares()), runningWorks_(preparedLaunch()), thread_([this] { loop(); }) {
  spares_.reserve(2 * kSpareLaunches);
}

HostStream::~HostStream() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    idleCv_.wait(lock, [this] { return pending_.load() == 0; });
    stop_ = true;
  }
  workCv_.notify_all();
  thread_.join();
}

HostStream::Slot& HostStream::push() {
  const size_t queued = static_cast<size_t>(queued_.load(std::memory_order_relaxed));
  if (queued == ring_.size()) {
    // Full: double the ring, its live launches first and in order (moving them allocates nothing more).
    std::vector<Slot> grown(std::max<size_t>(4, 2 * ring_.size()));
    for (size_t i = 0; i < queued; ++i) grown[i] = std::move(ring_[(head_ + i) % ring_.size()]);
    ring_.swap(grown);
    head_ = 0;
  }
  return ring_[(head_ + queued) % ring_.size()];
}

bool HostStream::published() {
  queued_.fetch_add(1, std::memory_order_release);
  pending_.fetch_add(1, std::memory_order_relaxed);
  // One wake-up per sleep: the enqueues that follow before the thread is back on the lock would each pay a futex
  // call for nothing.
  const bool wake = workerWaiting_;
  workerWaiting_ = false;
  return wake;
}

void HostStream::enqueue(std::vector<CommWork>& works) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Slot& slot = push();
    slot.comm = nullptr;
    slot.works.swap(works);
    // The caller refills what it gets back: storage of a launch that ran, while there is some.
    if (!spares_.empty()) {
      works.swap(spares_.back());
      spares_.pop_back();
    }
    wake = published();
  }
  if (wake) workCv_.notify_one();
}

void HostStream::enqueue(Comm* comm, const coll::CollOp* ops, size_t n) {
  CHORUS_ENFORCE(n >= 1 && n <= kInlineOps, "a launch of ", n, " operations held in a queue slot");
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Slot& slot = push();
    slot.comm = comm;
    slot.nops = static_cast<uint32_t>(n);
    std::copy(ops, ops + n, slot.ops);
    wake = published();
  }
  if (wake) workCv_.notify_one();
}

bool HostStream::runFront(std::unique_lock<std::mutex>& lock) {
  if (running_ || queued_.load(std::memory_order_relaxed) == 0) return false;
  Slot& slot = ring_[head_];
  if (slot.comm != nullptr) {
    // Into the running launch's first work, whose storage stays (one work of a few operations).
    runningWorks_.resize(1);
    runningWorks_[0].comm = slot.comm;
    runningWorks_[0].ops.assign(slot.ops, slot.ops + slot.nops);
    slot.comm = nullptr;
  } else {
    runningWorks_.swap(slot.works);
    spares_.push_back(std::move(slot.works));  // the storage of the launch that ran before, for the next caller
    slot.works.clear();
  }
  head_ = (head_ + 1) % ring_.size();
  queued_.fetch_sub(1, std::memory_order_relaxed);
  running_ = true;
  lock.unlock();
  Failure r = executeLaunch(runningWorks_);
  lock.lock();
  running_ = false;
  if (!r.ok() && firstError_.ok()) firstError_ = r;
  // Only an empty stream interests a waiter (the next launch, if any, runs on this thread): a wake-up per
  // launch would cost a context switch each when ranks outnumber cores.
  if (pending_.fetch_sub(1, std::memory_order_release) == 1) idleCv_.notify_all();
  return true;
}

void HostStream::leaveToSynchronizer(std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  const uint64_t end = nowNs() + kLeaveToSynchronizerNs;
  while (queued_.load(std::memory_order_acquire) != 0 && nowNs() < end) {
    cpuRelax();
  }
  lock.lock();
}

void HostStream::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  bool lingered = false;
  for (;;) {
    if (runFront(lock)) {
      lingered = false;
      continue;
    }
    if (stop_ && queued_.load(std::memory_order_relaxed) == 0) return;
    // The next launch often follows at once (a training loop's next bucket): watch for it a little while,
    // yielding the core, before a sleep that would make its enqueue pay a wake-up.
    if (!lingered) {
      lingered = true;
      linger(lock, [this] { return queued_.load(std::memory_order_acquire) != 0; });
      if (queued_.load(std::memory_order_acquire) != 0) leaveToSynchronizer(lock);
      continue;  // re-check under the lock: an enqueue meanwhile saw no sleeper and woke nobody
    }
    workerWaiting_ = true;
    workCv_.wait(lock);
    workerWaiting_ = false;
    lingered = false;
  }
}

Failure HostStream::takeError() {
  Failure r = firstError_;
  firstError_ = Failure{};
  return r;
}

Failure HostStream::synchronize() {
  std::unique_lock<std::mutex> lock(mu_);
  bool lingered = false;
  while (pending_.load(std::memory_order_acquire) != 0) {
    // Work the stream's thread has not started yet runs here, in order: a caller that synchronizes right
    // after enqueueing (the common training-loop pattern) then pays no thread hand-off at all.
    if (runFront(lock)) continue;
    // The stream's thread is running the last launches: watch for the end a little while (yielding) before
    // sleeping, so that its finish needs no wake-up.
    if (!lingered) {
      lingered = true;
      linger(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
      continue;
    }
    idleCv_.wait(lock);
  }
  return takeError();
}

Failure HostStream::query() {
  std::lock_guard<std::mutex> lock(mu_);
  if (firstError_.status != Status::kSuccess) return takeError();
  if (pending_.load() != 0) return Failure{Status::kInProgress, ""};
  return Failure{};
}

HostStream* checkStream(void* handle, const char* arg) {
  if (handle == nullptr) return nullptr;
  CHORUS_CHECK_ARG(streamHandles().contains(handle), arg,
                   " is not a live host stream (create it with chorusStreamCreate; CUDA streams need a CUDA "
                   "communicator)");
  return static_cast<HostStream*>(handle);
}

}  // namespace chorus::core
