// Pipeline schedules on their own: every pass exactly once, forward before backward, the stored activations
// each schedule promises, and runnable by all stages together (a simulation of the whole pipeline that only
// lets a pass start once its input exists finishes every pass: no schedule waits for something that never
// comes).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "parallel/schedule.h"

namespace chorus::train {
namespace {

struct Shape {
  ScheduleKind kind;
  int P, M, V;
};

std::vector<Shape> shapes() {
  std::vector<Shape> out;
  for (int P : {1, 2, 3, 4, 8})
    for (int M : {1, 2, 3, 4, 5, 8, 16}) {
      out.push_back({ScheduleKind::kGpipe, P, M, 1});
      out.push_back({ScheduleKind::kOneFOneB, P, M, 1});
      if (P > 1 && M % P == 0)
        for (int V : {2, 3, 4}) out.push_back({ScheduleKind::kInterleaved, P, M, V});
    }
  return out;
}

TEST(Schedule, EveryPassOnceAndForwardBeforeBackward) {
  for (const Shape& s : shapes()) {
    for (int p = 0; p < s.P; ++p) {
      auto acts = pipelineSchedule(s.kind, s.P, p, s.M, s.V);
      ASSERT_EQ(acts.size(), static_cast<size_t>(2 * s.M * s.V));
      std::set<std::tuple<bool, int, int>> seen;
      for (const PipeAction& a : acts) {
        ASSERT_TRUE(seen.insert({a.forward, a.chunk, a.micro}).second) << scheduleName(s.kind);
        if (!a.forward) {
          ASSERT_TRUE(seen.count({true, a.chunk, a.micro})) << scheduleName(s.kind) << " backward first";
        }
      }
    }
  }
}

TEST(Schedule, StoredActivationsMatchEachSchedulesBound) {
  for (int P : {2, 4, 8})
    for (int M : {4, 8, 16}) {
      for (int p = 0; p < P; ++p) {
        EXPECT_EQ(peakStoredActivations(pipelineSchedule(ScheduleKind::kGpipe, P, p, M, 1)), M);
        EXPECT_EQ(peakStoredActivations(pipelineSchedule(ScheduleKind::kOneFOneB, P, p, M, 1)), std::min(P - p, M));
      }
    }
  EXPECT_NEAR(idealBubbleFraction(4, 8, 1), 3.0 / 11.0, 1e-12);
  EXPECT_NEAR(idealBubbleFraction(4, 8, 2), 3.0 / 19.0, 1e-12);
}

// Runs every stage's actions with unit time per pass; a pass starts when its stage is free and its input
// exists (the previous virtual stage's forward, the next one's backward). Returns the makespan, or -1 when
// the pipeline stops with passes left (a deadlock).
int simulate(const Shape& s) {
  std::vector<std::vector<PipeAction>> acts;
  for (int p = 0; p < s.P; ++p) acts.push_back(pipelineSchedule(s.kind, s.P, p, s.M, s.V));
  const int S = s.P * s.V;                         // virtual stages
  std::map<std::tuple<bool, int, int>, int> done;  // (forward, virtual stage, micro) -> finish time
  std::vector<size_t> next(s.P, 0);
  std::vector<int> freeAt(s.P, 0);
  size_t left = 0;
  for (auto& a : acts) left += a.size();
  int t = 0;
  while (left > 0) {
    bool progressed = false;
    for (int p = 0; p < s.P; ++p) {
      if (next[p] >= acts[p].size() || freeAt[p] > t) continue;
      const PipeAction& a = acts[p][next[p]];
      const int vs = a.chunk * s.P + p;
      std::tuple<bool, int, int> need =
          a.forward ? std::make_tuple(true, vs - 1, a.micro)
                    : (vs == S - 1 ? std::make_tuple(true, vs, a.micro) : std::make_tuple(false, vs + 1, a.micro));
      bool ready = (a.forward && vs == 0) || (done.count(need) && done[need] <= t);
      if (!ready) continue;
      done[{a.forward, vs, a.micro}] = t + 1;
      freeAt[p] = t + 1;
      ++next[p];
      --left;
      progressed = true;
    }
    if (!progressed) {
      bool anyBusy = false;
      for (int p = 0; p < s.P; ++p) anyBusy = anyBusy || freeAt[p] > t;
      bool anyReadyLater = false;
      for (auto& [k, when] : done) anyReadyLater = anyReadyLater || when > t;
      if (!anyBusy && !anyReadyLater) return -1;
    }
    ++t;
  }
  int end = 0;
  for (int f : freeAt) end = std::max(end, f);
  return end;
}

TEST(Schedule, EveryScheduleRunsToTheEndAcrossAllStages) {
  for (const Shape& s : shapes()) {
    int makespan = simulate(s);
    ASSERT_GT(makespan, 0) << scheduleName(s.kind) << " P=" << s.P << " M=" << s.M << " V=" << s.V << " deadlocks";
    // With unit passes the ideal is 2*M*V passes per stage; the rest is the bubble, which never exceeds
    // GPipe's 2(P-1).
    EXPECT_LE(makespan, 2 * s.M * s.V + 2 * (s.P - 1) * (s.kind == ScheduleKind::kInterleaved ? s.V : 1))
        << scheduleName(s.kind);
  }
}

TEST(Schedule, InterleavedNeedsMicroBatchesInMultiplesOfStages) {
  EXPECT_THROW(pipelineSchedule(ScheduleKind::kInterleaved, 4, 0, 6, 2), std::invalid_argument);
  EXPECT_THROW(parseSchedule("zigzag"), std::invalid_argument);
  EXPECT_EQ(parseSchedule("1f1b"), ScheduleKind::kOneFOneB);
}

}  // namespace
}  // namespace chorus::train
