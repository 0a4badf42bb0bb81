#include "core/host_stream.h"

#include <sched.h>

#include <algorithm>

#include "base/error.h"
#include "base/futex.h"
#include "base/logging.h"
#include "base/sched_policy.h"
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

// Yields the core until `bell` no longer holds `seen` (true) or `ns` have passed (false). The caller holds no lock
// and re-checks its condition under the lock after.
bool watch(const std::atomic<uint32_t>& bell, uint32_t seen, uint64_t ns) {
  const uint64_t end = nowNs() + ns;
  for (int i = 0;; ++i) {
    if (bell.load(std::memory_order_acquire) != seen) return true;
    if ((i & 7) == 7 && nowNs() >= end) return false;
    sched_yield();
  }
}

// Yields the core for `ns` (the caller holds no lock).
void yieldFor(uint64_t ns) {
  const uint64_t end = nowNs() + ns;
  while (nowNs() < end) sched_yield();
}

// Rings a bell (the stream's lock held: ringers take turns, so a plain increment is enough).
void ring(std::atomic<uint32_t>& bell) {
  bell.store(bell.load(std::memory_order_relaxed) + 1, std::memory_order_release);
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
static_assert((kInitialSlots & (kInitialSlots - 1)) == 0, "the ring indexes with a mask");

}  // namespace

HostStream::HostStream() : ring_(kInitialSlots), spares_(preparedSpares()), runningWorks_(preparedLaunch()) {
  spares_.reserve(2 * kSpareLaunches);
  for (CommWork& work : batch_) work.ops.reserve(kInlineOps);
  thread_ = std::thread([this] { loop(); });  // last: the thread uses everything above
}

HostStream::~HostStream() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    idleCv_.wait(lock, [this] { return pending_ == 0; });
    stop_ = true;
  }
  workCv_.notify_all();
  thread_.join();
}

HostStream::Slot& HostStream::push() {
  if (queued_ == ring_.size()) {
    // Full: double the ring, its live launches first and in order (moving them allocates nothing more).
    std::vector<Slot> grown(2 * ring_.size());
    for (size_t i = 0; i < queued_; ++i) grown[i] = std::move(ring_[(head_ + i) & (ring_.size() - 1)]);
    ring_.swap(grown);
    head_ = 0;
  }
  return ring_[(head_ + queued_) & (ring_.size() - 1)];
}

void HostStream::pop() {
  head_ = (head_ + 1) & (ring_.size() - 1);
  --queued_;
}

bool HostStream::published() {
  ++queued_;
  ++pending_;
  // One signal per watch or sleep: the enqueues that follow before the thread is back on the lock see kBusy and
  // pay nothing.
  switch (worker_) {
    case Worker::kBusy: return false;
    case Worker::kWatching:
      worker_ = Worker::kBusy;
      ring(workBell_);
      return false;
    case Worker::kSleeping: worker_ = Worker::kBusy; return true;
  }
  return false;
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

void HostStream::enqueue(Comm* comm, const coll::CollOp* ops, size_t n, uint32_t ticket) {
  CHORUS_ENFORCE(n >= 1 && n <= kInlineOps, "a launch of ", n, " operations held in a queue slot");
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Slot& slot = push();
    slot.comm = comm;
    slot.nops = static_cast<uint32_t>(n);
    slot.ticket = ticket;
    std::copy(ops, ops + n, slot.ops);
    wake = published();
  }
  if (wake) workCv_.notify_one();
}

bool HostStream::runFront(std::unique_lock<std::mutex>& lock) {
  if (running_ || queued_ == 0) return false;
  running_ = true;
  Failure first;
  int ran = 0;
  if (ring_[head_].comm == nullptr) {
    // A group's launch: swapped out of its slot, whose storage becomes the one that ran before (for the next caller).
    Slot& slot = ring_[head_];
    runningWorks_.swap(slot.works);
    spares_.push_back(std::move(slot.works));
    slot.works.clear();
    pop();
    lock.unlock();
    first = executeLaunch(runningWorks_);
    ran = 1;
  } else {
    // Launches of a few operations: as many as follow in the ring, up to kBatch, taken under one lock.
    size_t taken = 0;
    while (taken < kBatch && queued_ != 0 && ring_[head_].comm != nullptr) {
      Slot& slot = ring_[head_];
      CommWork& work = batch_[taken++];  // storage that stays: its ops hold kInlineOps from the constructor
      work.comm = slot.comm;
      work.ops.assign(slot.ops, slot.ops + slot.nops);
      work.ticket = slot.ticket;
      slot.comm = nullptr;
      pop();
    }
    lock.unlock();
    for (size_t i = 0; i < taken; ++i) {
      Failure r = executeLaunch(&batch_[i], 1);
      if (!r.ok() && first.ok()) first = std::move(r);
    }
    ran = static_cast<int>(taken);
  }
  lock.lock();
  running_ = false;
  if (!first.ok() && firstError_.ok()) firstError_ = std::move(first);
  pending_ -= ran;
  // Only an empty stream interests a waiter (the next launch, if any, runs on this thread): a wake-up per
  // launch would cost a context switch each when ranks outnumber cores.
  if (pending_ == 0) {
    if (idleWatchers_ != 0) ring(idleBell_);
    idleCv_.notify_all();
  }
  return true;
}

void HostStream::loop() {
  // A batch thread does not preempt the thread that wakes it. Woken at once on its waker's core, this thread ran the
  // first launch of a loop ahead of the caller, which waited for its core to enqueue the rest and synchronize: the
  // first 10-launch loop of reduce_scatter_perf -b 32 -n 10 (2 ranks) took about 3 us per launch instead of 0.3-0.5
  // in 7 of 50 runs, 1 of 50 as a batch thread (alternated). The trainer's step and its exposed communication, and 2,
  // 4 and 8 ranks' small rows, bound or not, did not change beyond their spread (docs/performance.md, session 24). A
  // yield before taking the launch cured it too but cost oversubscribed ranks. Where the policy cannot be set, the
  // thread runs as before.
  if (!runAsBatch()) CHORUS_LOG_INFO(kColl, "host stream: its thread stays SCHED_OTHER (SCHED_BATCH refused)");
  std::unique_lock<std::mutex> lock(mu_);
  bool lingered = false;
  for (;;) {
    if (runFront(lock)) {
      lingered = false;
      continue;
    }
    if (stop_ && queued_ == 0) return;
    // The next launch often follows at once (a training loop's next bucket): watch for it a little while,
    // yielding the core, before a sleep that would make its enqueue pay a wake-up.
    if (!lingered) {
      lingered = true;
      worker_ = Worker::kWatching;
      const uint32_t seen = workBell_.load(std::memory_order_relaxed);
      lock.unlock();
      // Rung: a launch came. Enqueue-then-synchronize is the common pattern, so leave it to a synchronizer a
      // moment, to run on its own thread with no hand-off, before taking it.
      if (watch(workBell_, seen, kLingerNs)) yieldFor(kLeaveToSynchronizerNs);
      lock.lock();
      if (worker_ == Worker::kWatching) worker_ = Worker::kBusy;
      continue;  // re-check under the lock
    }
    worker_ = Worker::kSleeping;
    workCv_.wait(lock);
    worker_ = Worker::kBusy;
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
  while (pending_ != 0) {
    // Work the stream's thread has not started yet runs here, in order: a caller that synchronizes right
    // after enqueueing (the common training-loop pattern) then pays no thread hand-off at all.
    if (runFront(lock)) continue;
    // The stream's thread is running the last launches: watch for the end a little while (yielding) before
    // sleeping, so that its finish needs no wake-up.
    if (!lingered) {
      lingered = true;
      ++idleWatchers_;
      const uint32_t seen = idleBell_.load(std::memory_order_relaxed);
      lock.unlock();
      watch(idleBell_, seen, kLingerNs);
      lock.lock();
      --idleWatchers_;
      continue;
    }
    idleCv_.wait(lock);
  }
  return takeError();
}

Failure HostStream::query() {
  std::lock_guard<std::mutex> lock(mu_);
  if (firstError_.status != Status::kSuccess) return takeError();
  if (pending_ != 0) return Failure{Status::kInProgress, ""};
  return Failure{};
}

HostStream* checkLiveStream(void* handle, const char* arg) {
  CHORUS_CHECK_ARG(streamHandles().contains(handle), arg,
                   " is not a live host stream (create it with chorusStreamCreate; CUDA streams need a CUDA "
                   "communicator)");
  return static_cast<HostStream*>(handle);
}

}  // namespace chorus::core
