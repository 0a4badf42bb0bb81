// The one blocking-wait loop of Chorus. A wait spins for CHORUS_SPIN_US, then yields, then sleeps on a futex
// in short slices, so that ranks that outnumber cores still progress. Between checks it watches the
// deadline (chorusTimeout), the communicator's abort flag and, every few milliseconds, a liveness probe that
// throws chorusRemoteError when a peer has died.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "base/deadline.h"
#include "base/futex.h"
#include "base/status.h"

namespace chorus {

// Value of an abort flag set by chorusCommRevoke (1: chorusCommAbort): waits name the cause in their error.
constexpr uint32_t kAbortRevoked = 2;

// What a blocking wait watches besides its own condition.
struct WaitContext {
  Deadline deadline = Deadline::never();
  const std::atomic<uint32_t>* abort = nullptr;  // non-zero: give up with "aborted"
  std::function<void()> liveness;                // throws chorus::Error when a peer is gone; may be empty
  std::string what;                              // names the wait in messages: "recv from rank 3 over shm"
  // How long to spin before yielding, in nanoseconds; negative: CHORUS_SPIN_US. A rank that shares its core
  // with other ranks sets 0: spinning only delays the peer it waits for.
  int64_t spinNs = -1;
  // How long to yield after spinning before sleeping on a futex, in nanoseconds; negative: as long as the
  // spin, plus 50 us. Ranks that outnumber cores yield much longer: a futex sleep then costs a wake-up and
  // a scheduling round on every step (measured: 8 ranks on 2 cores, 8 KiB all-reduce 457 us with 50 us of
  // yielding, 65 us with 1 ms).
  int64_t yieldNs = -1;
};

// Throws the error that ends a wait if one applies now (abort, deadline); does not call liveness.
void checkWaitInterrupted(const WaitContext& ctx);

// How long a wait on ctx spins, then yields, before it sleeps (nanoseconds; WaitContext::spinNs and yieldNs
// resolved against CHORUS_SPIN_US). Waiter applies it; so do waits that poll something other than a word.
struct WaitBudget {
  uint64_t spinNs;
  uint64_t yieldNs;
};
WaitBudget waitBudget(const WaitContext& ctx);

// Returns the status a wait reports when it ends for `ctx`'s reasons (for non-throwing callers).
Status waitInterruptedStatus(const WaitContext& ctx);

// A waiter that escalates from spinning to sleeping. Usage:
//   Waiter w(ctx);
//   while (!ready()) w.pause(word, observed);   // word: a futex word the producer bumps and wakes
class Waiter {
 public:
  explicit Waiter(const WaitContext& ctx);
  // Ends the wait: records in the calling thread whether its core is shared with the peer it waits for (below).
  ~Waiter();
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;
  // One step of waiting. When word is non-null and still equals `observed`, the sleep phase sleeps on it.
  // Throws chorus::Error on abort, timeout or a dead peer.
  void pause(const std::atomic<uint32_t>* word = nullptr, uint32_t observed = 0);
  // The same for a wait on several words at once: the sleep phase ends at a wake on any of them (futexWaitAny;
  // n == 0 sleeps 200 us, as pause() without a word).
  void pauseAny(const FutexWord* words, int n);
  // Ends this wait and starts the next from its first phase (call after progress, so that the next wait spins
  // first; briefly where this thread's core is shared, below).
  void reset();
  // True once the waiter has passed the spinning phase (producers then need a futexWake).
  bool sleeping() const { return phase_ >= 2; }
  // True while the waiter spins (before it yields the core or sleeps).
  bool spinning() const { return phase_ == 0; }

  // Whether the calling thread's waits spin only kSharedCoreSpinNs before they yield: its last wait ended right
  // after a yield that ran another thread on its core for kSharedCoreMinNs-kSharedCoreMaxNs. Ranks with a core each
  // can still meet on one when the scheduler places them so for a while (unbound ranks on a busy machine); each then
  // spun its whole budget holding the core the other needed to publish, and every step cost two budgets (2 ranks
  // spinning 20 us on one core: 32-54 us per 8 B-2 KiB all-reduce, reduce-scatter, send/recv). The short spin keeps
  // the cost of a wrong hint small: another thread that ran briefly (a library's polling thread) says nothing of
  // where the peer runs, and a wait that then ends while spinning clears the hint (yielding at once instead cost
  // 2-rank benchmarks whose ranks had a core each up to 1.3 us per call: some other thread took each yield's turn). A
  // longer yield (another thread's time slice, a computation) sets nothing: a peer that shares the core hands it back
  // sooner.
  static bool coreSharedHint();
  static constexpr uint64_t kSharedCoreSpinNs = 2000;
  static constexpr uint64_t kSharedCoreMinNs = 2000;
  static constexpr uint64_t kSharedCoreMaxNs = 200000;

 private:
  const WaitContext& ctx_;
  uint64_t startNs_;      // when the wait (or the part since the last reset) began; 0 until the clock is first read
  uint64_t lastCheckNs_;  // the last liveness check; 0 until the clock is first read
  uint64_t spinNs_;
  uint64_t yieldNs_;
  uint64_t spinNow_;  // this wait's spin: spinNs_, or less on a shared core (coreSharedHint)
  uint32_t iter_ = 0;
  int phase_ = 0;  // 0 spin, 1 yield, 2 sleep
  // The last yield ran another thread on this core for a share-revealing time (coreSharedHint).
  bool yieldRanOther_ = false;

  int firstPhase() const;    // where a wait starts: the spin, or the yield without a spin budget
  uint64_t spinNow() const;  // the spin of a wait that starts now
  void finish();             // records coreSharedHint from how this wait ended
  // Takes `now` as the start if the wait has not read the clock yet; true when it did so.
  bool started(uint64_t now);
};

// Monotonic nanoseconds.
uint64_t nowNs();

}  // namespace chorus
