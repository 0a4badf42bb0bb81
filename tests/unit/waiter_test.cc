// Waiter: the phases a wait goes through, and the hint that makes a thread whose core is shared spin briefly. Without a
// spin budget (ranks that outnumber cores) a wait yields from its first pause and after every reset; with one it spins
// until the budget is spent, then yields, then sleeps; an abort ends the wait with chorusInvalidUsage (noticed once the
// spin is over: the spinning phase does not look).
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "base/error.h"
#include "base/wait.h"

namespace chorus {
namespace {

WaitContext contextWith(int64_t spinNs, int64_t yieldNs) {
  WaitContext ctx;
  ctx.what = "waiter test";
  ctx.spinNs = spinNs;
  ctx.yieldNs = yieldNs;
  return ctx;
}

TEST(Waiter, WithoutASpinBudgetNeverSpins) {
  const WaitContext ctx = contextWith(0, 1000000000);
  Waiter w(ctx);
  EXPECT_FALSE(w.spinning());
  EXPECT_FALSE(w.sleeping());
  for (int i = 0; i < 200; ++i) {
    w.pause();
    EXPECT_FALSE(w.spinning()) << i;
  }
  w.reset();
  EXPECT_FALSE(w.spinning());
  EXPECT_FALSE(w.sleeping());
}

TEST(Waiter, SpinsForItsBudgetThenYieldsAndSpinsAgainAfterAReset) {
  const WaitContext ctx = contextWith(2000000, 1000000000);  // 2 ms of spinning
  Waiter w(ctx);
  EXPECT_TRUE(w.spinning());
  const auto start = std::chrono::steady_clock::now();
  while (w.spinning()) w.pause();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2));
  EXPECT_FALSE(w.sleeping());  // yielding: the yield budget is a second
  w.reset();
  // Spins again (briefly, where its one yield happened to run another thread on this core: the hint tested below).
  EXPECT_TRUE(w.spinning());
}

TEST(Waiter, SleepsOnceSpinAndYieldBudgetsAreSpent) {
  const WaitContext ctx = contextWith(0, 0);
  Waiter w(ctx);
  w.pause();
  EXPECT_TRUE(w.sleeping());
  w.reset();
  EXPECT_FALSE(w.sleeping());
}

TEST(Waiter, AnAbortEndsTheWaitWithAndWithoutASpinBudget) {
  for (int64_t spinNs : {int64_t{0}, int64_t{5000000}}) {  // none, or 5 ms (spent before the abort comes)
    std::atomic<uint32_t> abort{0};
    WaitContext ctx = contextWith(spinNs, 0);
    ctx.abort = &abort;
    Waiter w(ctx);
    std::thread aborter([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      abort.store(1);
    });
    try {
      for (;;) w.pause();
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::kInvalidUsage) << spinNs;
      EXPECT_NE(std::string(e.what()).find("aborted"), std::string::npos) << e.what();
    }
    aborter.join();
  }
}

// Pins the calling thread to one CPU; false where the system refuses.
bool pinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

// Waits, with a spin budget, for data that another thread pinned to the same CPU publishes once this thread yields,
// after which that thread stays busy for `busy` and sleeps. Returns the waiter's hint after the wait, or nothing when
// the other thread published before this one yielded (the scheduler ran it early: the case to try again).
std::optional<bool> hintAfterAWaitOnASharedCore(int cpu, std::chrono::microseconds busy) {
  std::atomic<int> started{0};
  std::atomic<int> go{0};
  std::atomic<int> data{0};
  std::thread other([&] {
    pinTo(cpu);
    started.store(1);
    while (go.load() == 0) sched_yield();
    data.store(1);
    const auto until = std::chrono::steady_clock::now() + busy;
    while (std::chrono::steady_clock::now() < until) {
    }
    // Off the core by sleeping, not by exiting (slower, and slower still under a sanitizer).
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  });
  while (started.load() == 0) sched_yield();
  const WaitContext ctx = contextWith(1, 1000000000);  // spins 64 pauses, then yields (a second)
  bool yielded = false;
  go.store(1);
  {
    Waiter w(ctx);
    while (data.load() == 0) {
      w.pause();
      yielded = yielded || !w.spinning();
    }
  }
  other.join();
  if (!yielded) return std::nullopt;
  return Waiter::coreSharedHint();
}

// hintAfterAWaitOnASharedCore on this thread's CPU, this thread pinned to it, until the wait yielded (5 tries at most).
std::optional<bool> hintOnThisCore(std::chrono::microseconds busy) {
  const int cpu = sched_getcpu();
  if (cpu < 0 || !pinTo(cpu)) return std::nullopt;
  std::optional<bool> hint;
  for (int attempt = 0; attempt < 5 && !hint; ++attempt) hint = hintAfterAWaitOnASharedCore(cpu, busy);
  return hint;
}

TEST(Waiter, AWaitThatEndedAfterAShortYieldToAnotherThreadOnItsCoreMakesTheNextSpinBriefly) {
  // In a thread of its own: the hint is the thread's.
  std::thread t([] {
    const std::optional<bool> hint = hintOnThisCore(std::chrono::microseconds(10));
    ASSERT_TRUE(hint.has_value()) << "the other thread always ran before the wait yielded (or pinning failed)";
    EXPECT_TRUE(*hint);
    // The next wait spins kSharedCoreSpinNs, not its budget of a second, then yields. Nothing else wants the core
    // (the other thread sleeps), so its yields run nobody and the wait leaves the hint off.
    const WaitContext ctx = contextWith(1000000000, 1000000000);
    {
      Waiter w(ctx);
      EXPECT_TRUE(w.spinning());
      const auto start = std::chrono::steady_clock::now();
      while (w.spinning()) w.pause();
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
      for (int i = 0; i < 10; ++i) w.pause();
    }
    EXPECT_FALSE(Waiter::coreSharedHint());
    // And the wait after it spins its whole budget again (a spinning phase ended early would not be).
    Waiter w(ctx);
    const auto start = std::chrono::steady_clock::now();
    while (w.spinning() && std::chrono::steady_clock::now() - start < std::chrono::milliseconds(20)) w.pause();
    EXPECT_TRUE(w.spinning());
  });
  t.join();
}

TEST(Waiter, AYieldThatRanAnotherThreadForLongSetsNoHint) {
  // A computation or another thread's time slice on the core: the wait spins first next time, as before.
  std::thread t([] {
    const std::optional<bool> hint = hintOnThisCore(std::chrono::milliseconds(2));
    ASSERT_TRUE(hint.has_value()) << "the other thread always ran before the wait yielded (or pinning failed)";
    EXPECT_FALSE(*hint);
  });
  t.join();
}

}  // namespace
}  // namespace chorus
