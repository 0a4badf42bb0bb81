// Host streams: ordered queues of launched work, executed by one thread per stream. A collective enqueued
// on a host stream returns at once; chorusStreamSynchronize waits for everything enqueued before it and
// reports the first error any of it hit.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/launch.h"

namespace chorus::core {

class HostStream {
 public:
  HostStream();
  ~HostStream();  // waits for enqueued work, then stops the thread
  HostStream(const HostStream&) = delete;
  HostStream& operator=(const HostStream&) = delete;

  // Appends one launch (a group): its works run together once everything before is done. The launch is swapped
  // into a slot of the stream's queue, and `works` comes back holding the storage of a launch that has run (or
  // nothing, when more group launches are queued than the stream keeps spares for), with its vectors' capacity: a
  // caller that refills it enqueues without allocating.
  void enqueue(std::vector<CommWork>& works);
  // The most operations a launch of one communicator can have to be held in its queue slot.
  static constexpr size_t kInlineOps = 2;
  // Appends a launch of n <= kInlineOps operations of `comm` (a call outside a group, or a group's send and
  // receive: the common cases), already counted (opEnqueued) and recorded: they are kept in the slot itself, so
  // that no queue depth makes an enqueue allocate.
  void enqueue(Comm* comm, const coll::CollOp* ops, size_t n);
  // Waits until the queue is empty; returns and clears the first failure since the last report (base/error.h:
  // the caller raises it).
  Failure synchronize();
  // The first failure since the last report (then cleared); else status kInProgress while work is pending;
  // else ok.
  Failure query();

 private:
  void loop();
  // Runs the oldest queued launch on the calling thread (the lock is released meanwhile); false when the
  // queue is empty or another thread is running a launch. Launches run one at a time, in order.
  bool runFront(std::unique_lock<std::mutex>& lock);
  // The stream's thread, having found a launch while lingering: gives a synchronizer a moment to take it (the
  // lock is released meanwhile).
  void leaveToSynchronizer(std::unique_lock<std::mutex>& lock);
  Failure takeError();

  std::mutex mu_;
  std::condition_variable workCv_;
  std::condition_variable idleCv_;
  // One queued launch: a few operations of one communicator held in place (comm set), or a group's launch.
  struct Slot {
    Comm* comm = nullptr;  // set: the launch is ops[0, nops) of comm
    uint32_t nops = 0;
    coll::CollOp ops[kInlineOps];
    std::vector<CommWork> works;  // otherwise a group's launch
  };
  // Appends a slot (the lock held) and returns it, doubling the ring when it is full.
  Slot& push();
  // Counts the slot push() returned, once filled (the lock held); true when the stream's thread must be woken.
  bool published();
  // The queued launches: a ring of slots [head_, head_ + queued_) modulo its size. A launch of a few operations
  // is copied into its slot; a group's launch is swapped in, and its caller gets a spare launch's storage back. Either
  // way a warm stream allocates nothing.
  std::vector<Slot> ring_;
  std::vector<std::vector<CommWork>> spares_;  // storage of group launches that ran, for the next callers
  size_t head_ = 0;
  std::vector<CommWork> runningWorks_;  // the launch being run (one at a time)
  std::atomic<int> pending_{0};         // launches enqueued and not finished (changed under mu_, read without)
  std::atomic<int> queued_{0};          // launches in ring_ (changed under mu_, read without)
  bool running_ = false;                // a thread is executing a launch
  bool workerWaiting_ = false;          // the stream's thread sleeps on workCv_, and no enqueue has woken it yet
  bool stop_ = false;
  Failure firstError_;
  std::thread thread_;
};

// Returns the stream for a chorusStream_t; throws chorusInvalidArgument naming `arg` for a handle that is
// not a live host stream. NULL gives nullptr.
HostStream* checkStream(void* handle, const char* arg = "stream");

}  // namespace chorus::core
