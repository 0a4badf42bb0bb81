#include "base/wait.h"

#include <sched.h>
#include <time.h>

#include <algorithm>

#include "base/error.h"
#include "base/futex.h"
#include "base/params.h"

namespace chorus {

uint64_t nowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

Status waitInterruptedStatus(const WaitContext& ctx) {
  if (ctx.abort != nullptr && ctx.abort->load(std::memory_order_relaxed) != 0) return Status::kInvalidUsage;
  if (ctx.deadline.expired()) return Status::kTimeout;
  return Status::kSuccess;
}

void checkWaitInterrupted(const WaitContext& ctx) {
  if (ctx.abort != nullptr && ctx.abort->load(std::memory_order_relaxed) != 0) {
    CHORUS_THROW(Status::kInvalidUsage, ctx.what,
                 ctx.abort->load(std::memory_order_relaxed) == kAbortRevoked ? ": the communicator was revoked"
                                                                             : ": the communicator was aborted");
  }
  if (ctx.deadline.expired()) {
    CHORUS_THROW(Status::kTimeout, ctx.what, ": no progress before the deadline (CHORUS_TIMEOUT_MS)");
  }
}

WaitBudget waitBudget(const WaitContext& ctx) {
  const int64_t spin = ctx.spinNs >= 0 ? ctx.spinNs : param::SpinUs() * 1000;
  const uint64_t spinNs = static_cast<uint64_t>(std::max<int64_t>(spin, 0));
  return {spinNs, ctx.yieldNs >= 0 ? static_cast<uint64_t>(ctx.yieldNs) : spinNs + 50000};
}

namespace {
// Waiter::coreSharedHint for this thread.
thread_local bool tlsCoreShared = false;
}  // namespace

bool Waiter::coreSharedHint() {
  return tlsCoreShared;
}

Waiter::Waiter(const WaitContext& ctx) : ctx_(ctx) {
  // The clock is read at the wait's first look at it (started()), not here: most waits end before that, and a
  // send/recv pair of 8 bytes constructed or reset its waiters three times per call, each a clock read.
  startNs_ = 0;
  lastCheckNs_ = 0;
  const WaitBudget budget = waitBudget(ctx);
  spinNs_ = budget.spinNs;
  yieldNs_ = budget.yieldNs;
  spinNow_ = spinNow();
  phase_ = firstPhase();
}

bool Waiter::started(uint64_t now) {
  if (startNs_ != 0) return false;
  startNs_ = now;
  if (lastCheckNs_ == 0) lastCheckNs_ = now;
  return true;
}

Waiter::~Waiter() {
  finish();
}

int Waiter::firstPhase() const {
  // No spin budget (ranks that outnumber cores): yield from the first pause. The spinning phase looks at the
  // clock only every 64 pauses, and 64 pauses took 1.5 us on an AMD EPYC (23 ns each): a budget of 0 spun that
  // long at every wait, holding the core that the rank waited for needed.
  return spinNs_ == 0 ? 1 : 0;
}

uint64_t Waiter::spinNow() const {
  return tlsCoreShared ? std::min(spinNs_, kSharedCoreSpinNs) : spinNs_;
}

void Waiter::finish() {
  // Ended while spinning: spinning works here. Ended after a yield: the hint is that yield's finding. A wait that
  // slept says nothing new (the peer was far from ready), and one that never paused leaves the phase it began in.
  if (phase_ == 0) {
    if (iter_ != 0) tlsCoreShared = false;
  } else if (phase_ == 1 && iter_ != 0) {
    tlsCoreShared = yieldRanOther_;
  }
  yieldRanOther_ = false;
}

void Waiter::reset() {
  finish();
  startNs_ = 0;
  iter_ = 0;
  spinNow_ = spinNow();
  phase_ = firstPhase();
}

void Waiter::pause(const std::atomic<uint32_t>* word, uint32_t observed) {
  if (word == nullptr) return pauseAny(nullptr, 0);
  const FutexWord w{word, observed};
  pauseAny(&w, 1);
}

void Waiter::pauseAny(const FutexWord* words, int n) {
  ++iter_;
  if (phase_ == 0) {
    cpuRelax();
    if ((iter_ & 63) != 0) return;
    const uint64_t now = nowNs();
    if (started(now) || now - startNs_ < spinNow_) return;
    phase_ = 1;
  }
  const uint64_t now = nowNs();
  started(now);
  if (phase_ == 1) {
    sched_yield();
    const uint64_t yielded = nowNs() - now;
    yieldRanOther_ = yielded >= kSharedCoreMinNs && yielded <= kSharedCoreMaxNs;
    // Yield before sleeping: with more ranks than cores the peer we wait for often needs exactly our core.
    if (now - startNs_ < spinNs_ + yieldNs_) {
      if ((iter_ & 15) == 0) checkWaitInterrupted(ctx_);
      return;
    }
    // No sleep in this call: sleeping() is true from now on, and a caller that sleeps only on words it asks a
    // waker for (a raised sleeping flag) gets one more look before the first sleep, instead of 200 us blind.
    phase_ = 2;
    checkWaitInterrupted(ctx_);
    return;
  }
  if (phase_ == 2) {
    // 1 ms slices bound the latency of abort and liveness checks.
    if (n == 1) {
      futexWait(words[0].word, words[0].seen, 1000);
    } else if (n > 1) {
      futexWaitAny(words, n, 1000);
    } else {
      struct timespec ts = {0, 200000};
      nanosleep(&ts, nullptr);
    }
  }
  checkWaitInterrupted(ctx_);
  if (ctx_.liveness && now - lastCheckNs_ > 5000000) {  // every 5 ms
    lastCheckNs_ = now;
    ctx_.liveness();
  }
}

}  // namespace chorus
