// The ordered queue of one host communicator: every operation of a process group is issued on the group's
// Chorus host stream (chorusStreamCreate), in call order, and returns at once. The queue knows which
// operations are done without an event API: it numbers them in issue order, and a chorusStreamSynchronize
// (or a chorusStreamQuery that finds the stream idle) completes every operation issued before it started.
//
// Who completes operations: the thread that waits on one (wait() runs the stream's not-yet-started launches
// itself, so a blocking dist.all_reduce costs no thread hand-off), and a completer thread, started on first
// need, that finishes operations somebody holds a future of or waits on with a timeout.
//
// Point-to-point operations are deferred and issued together, inside chorusGroupStart/End, when the next
// other operation, wait or query comes: sends and receives in one group never block each other, so an isend
// followed by an irecv works on every rank whatever the message sizes (one host stream runs its launches one
// after the other, and a lone send blocks until its receiver has posted).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "chorus/chorus.h"
#include "chorus_work.h"

namespace chorus_torch {

class OpQueue : public std::enable_shared_from_this<OpQueue> {
 public:
  // Takes ownership of comm (finalized, or aborted after a failure, by shutdown()). timeoutMs is the
  // communicator's deadline, named in timeout errors.
  OpQueue(chorusComm_t comm, int rank, int64_t timeoutMs);
  ~OpQueue();
  OpQueue(const OpQueue&) = delete;
  OpQueue& operator=(const OpQueue&) = delete;

  chorusComm_t comm() const { return comm_; }
  int rank() const { return rank_; }

  // Issues a plan (or defers it, for point-to-point and coalesced operations) and returns its work. Errors
  // found while issuing (bad arguments, an earlier failure) are thrown to the caller.
  c10::intrusive_ptr<ChorusWork> submit(OpPlan plan);

  // Runs an operation that needs host steps between its Chorus calls (its sizes come from an earlier
  // exchange): completes everything before it, then runs body on the calling thread with blocking calls (the
  // NULL stream), and returns its work, already complete. Errors are thrown.
  c10::intrusive_ptr<ChorusWork> runNow(OpPlan plan, const std::function<void(chorusComm_t comm)>& body);

  // Blocks until work is complete (its epilogue has run).
  void wait(ChorusWork& work);
  // True when work is complete; never blocks (but issues deferred operations).
  bool poll(ChorusWork& work);
  // Has the completer thread complete work (for futures and timed waits).
  void watch(ChorusWork& work);
  // Blocks until everything submitted so far is complete.
  void drain();

  // Between these, every operation is deferred and issued as one Chorus group (batch_isend_irecv).
  void startCoalescing();
  void endCoalescing();

  // Completes everything, stops the completer, destroys the stream and the communicator (finalized, or
  // aborted when an operation failed). Idempotent; later submissions fail.
  void shutdown();

  // The message of the first failed operation ("" when none): the communicator is then unusable.
  std::string failure();

 private:
  // Issues the deferred operations (one group), first completing earlier work when one of them has host
  // steps. Failures go to the deferred works.
  void flushDeferred();
  // Issues works under mu_: their prologues and calls (in a group when several or point-to-point), and
  // numbers them. Throws on a failed call.
  void issueLocked(const std::vector<c10::intrusive_ptr<ChorusWork>>& works);
  // Completes the operations issued before this call once the stream reaches them: blocking
  // (chorusStreamSynchronize) or not (chorusStreamQuery; returns false when the stream is busy or another
  // thread is completing). True when operation `target` is complete.
  bool complete(uint64_t target, bool block);
  void completerLoop();
  // The work's issue number, issuing it first when it is deferred; 0 when it failed before being issued.
  uint64_t issueNumber(ChorusWork& work);
  bool hasEpiloguePendingLocked() const;

  chorusComm_t comm_;
  chorusStream_t stream_ = nullptr;
  const int rank_;
  const int64_t timeoutMs_;

  std::mutex mu_;  // issue order and the comm's calls; the fields below
  uint64_t issued_ = 0;
  std::deque<c10::intrusive_ptr<ChorusWork>> pending_;  // issued, not complete, in issue order
  int epiloguesPending_ = 0;                            // works in pending_ with an epilogue
  std::vector<c10::intrusive_ptr<ChorusWork>> deferred_;
  bool coalescing_ = false;
  bool shutDown_ = false;
  std::string failure_;

  std::mutex syncMu_;                   // one thread completes operations at a time, in order
  std::atomic<uint64_t> completed_{0};  // every operation numbered <= this is complete

  std::mutex watchMu_;
  std::condition_variable watchCv_;
  uint64_t watchUpTo_ = 0;
  bool stopCompleter_ = false;
  std::thread completer_;
};

}  // namespace chorus_torch
