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
  // receive: the common cases), already counted (Comm::opsEnqueued) and recorded, with its ticket in comm's issue
  // order (CommWork::ticket): they are kept in the slot itself, so that no queue depth makes an enqueue allocate.
  void enqueue(Comm* comm, const coll::CollOp* ops, size_t n, uint32_t ticket);
  // Waits until the queue is empty; returns and clears the first failure since the last report (base/error.h:
  // the caller raises it).
  Failure synchronize();
  // The first failure since the last report (then cleared); else status kInProgress while work is pending;
  // else ok.
  Failure query();

 private:
  void loop();
  // Runs the oldest queued launches on the calling thread, in order (the lock is released meanwhile): up to kBatch
  // launches of a few operations taken at once, or one group's launch. False when the queue is empty or another
  // thread is running launches. One thread runs at a time.
  bool runFront(std::unique_lock<std::mutex>& lock);
  Failure takeError();

  // One queued launch: a few operations of one communicator held in place (comm set), or a group's launch.
  struct Slot {
    Comm* comm = nullptr;  // set: the launch is ops[0, nops) of comm
    uint32_t nops = 0;
    uint32_t ticket = 0;  // comm's issue order (CommWork::ticket)
    coll::CollOp ops[kInlineOps];
    std::vector<CommWork> works;  // otherwise a group's launch
  };
  // Appends a slot (the lock held) and returns it, doubling the ring when it is full.
  Slot& push();
  // Counts the slot push() returned, once filled (the lock held); true when the stream's thread sleeps and must be
  // woken (then notify workCv_ after unlocking). A thread watching the work bell instead is rung here.
  bool published();
  // Takes the oldest queued slot out of the ring (the lock held).
  void pop();

  // What the stream's thread is doing, for an enqueue to know how to tell it of new work (under mu_).
  enum class Worker : uint8_t {
    kBusy,      // running launches or about to look at the queue: it will see the new work
    kWatching,  // watching workBell_ a while (yielding the core) before it sleeps: ring the bell
    kSleeping,  // waiting on workCv_: wake it (once; the enqueues after see kBusy)
  };

  std::mutex mu_;
  std::condition_variable workCv_;
  std::condition_variable idleCv_;
  // The queued launches: a ring of slots [head_, head_ + queued_) modulo its size (a power of two). A launch of a
  // few operations is copied into its slot; a group's launch is swapped in, and its caller gets a spare launch's
  // storage back. Either way a warm stream allocates nothing.
  std::vector<Slot> ring_;
  std::vector<std::vector<CommWork>> spares_;  // storage of group launches that ran, for the next callers
  size_t head_ = 0;
  size_t queued_ = 0;                   // launches in ring_
  int pending_ = 0;                     // launches enqueued and not finished
  std::vector<CommWork> runningWorks_;  // the launch being run (one at a time)
  static constexpr size_t kBatch = 16;  // launches of a few operations runFront takes at once
  CommWork batch_[kBatch];              // what runFront took out of the ring, while it runs them
  bool running_ = false;                // a thread is executing launches
  Worker worker_ = Worker::kBusy;
  int idleWatchers_ = 0;  // synchronizers watching idleBell_
  bool stop_ = false;
  Failure firstError_;
  // The bells a waiting thread watches while it yields the core, each alone on its cache line and rung (a new
  // value) at most once per watch, under mu_. A watcher polling the queue's own counters instead took their cache
  // line away from every enqueue and every finished launch of the thread it waited for.
  alignas(64) std::atomic<uint32_t> workBell_{0};  // rung by an enqueue that finds the stream's thread kWatching
  alignas(64) std::atomic<uint32_t> idleBell_{0};  // rung when the last pending launch finishes, for idleWatchers_
  // thread_ shares idleBell_'s line harmlessly: it is written only by the constructor and the destructor.
  std::thread thread_;  // started at the end of the constructor
};

// Returns the stream for a chorusStream_t; throws chorusInvalidArgument naming `arg` for a handle that is
// not a live host stream. NULL gives nullptr (inline: most calls pass NULL).
HostStream* checkLiveStream(void* handle, const char* arg);
inline HostStream* checkStream(void* handle, const char* arg = "stream") {
  return handle == nullptr ? nullptr : checkLiveStream(handle, arg);
}

}  // namespace chorus::core
