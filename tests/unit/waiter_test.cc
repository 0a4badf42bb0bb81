// Waiter: the phases a wait goes through. Without a spin budget (ranks that outnumber cores) a wait yields from its
// first pause and after every reset; with one it spins until the budget is spent, then yields, then sleeps; an
// abort ends the wait with chorusInvalidUsage (noticed once the spin is over: the spinning phase does not look).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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

}  // namespace
}  // namespace chorus
