// The cost of a small blocking call when a thread alternates different operations (the gradient buckets of a
// training step, an all-reduce beside a broadcast): each thread keeps the plans of its last four operations
// (core/launch.cc), so up to four alternating shapes are not planned again, and a fifth is planned on every call.
// BM_AlternatingOperations: one rank (a communicator of one), so that the figure is the calls' own cost, with no
// peer to wait for; BM_AlternatingOperationsTwoRanks: two ranks as threads, the second driven in lockstep by a
// thread of the benchmark (a fixed number of iterations, so that it knows how many calls to make).
//
//   alternating_ops_bench --benchmark_filter=Alternating
#include <benchmark/benchmark.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "chorus/chorus.h"

namespace {

// Calls operation `k` (0-4: all-reduce, broadcast, reduce, all-gather, reduce-scatter) of 8 bytes.
void callShape(int k, chorusComm_t c, int64_t* in, int64_t* out) {
  switch (k) {
    case 0: chorusAllReduce(in, out, 1, chorusInt64, chorusSum, c, nullptr); break;
    case 1: chorusBroadcast(in, out, 1, chorusInt64, 0, c, nullptr); break;
    case 2: chorusReduce(in, out, 1, chorusInt64, chorusMax, 0, c, nullptr); break;
    case 3: chorusAllGather(in, out, 1, chorusInt64, c, nullptr); break;
    default: chorusReduceScatter(in, out, 1, chorusInt64, chorusSum, c, nullptr); break;
  }
}

// state.range(0) different operations in turn, each call on buffers one element further on (as nccl-tests move
// theirs); the time is per call.
void BM_AlternatingOperations(benchmark::State& state) {
  const int shapes = static_cast<int>(state.range(0));
  chorusComm_t c = nullptr;
  if (chorusCommInitAll(&c, 1, nullptr) != chorusSuccess) {
    state.SkipWithError("chorusCommInitAll failed");
    return;
  }
  std::vector<int64_t> in(64, 1), out(64, 0);
  int64_t calls = 0;
  for (auto _ : state) {
    for (int k = 0; k < shapes; ++k) {
      const size_t at = static_cast<size_t>(calls++ % 32);
      callShape(k, c, in.data() + at, out.data() + at);
    }
  }
  state.SetItemsProcessed(calls);
  // Seconds per call, printed with an SI prefix (n, u).
  state.counters["per_call"] =
      benchmark::Counter(static_cast<double>(calls), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  chorusCommDestroy(c);
}
BENCHMARK(BM_AlternatingOperations)->DenseRange(1, 5)->Unit(benchmark::kMicrosecond);

void BM_AlternatingOperationsTwoRanks(benchmark::State& state) {
  const int shapes = static_cast<int>(state.range(0));
  chorusComm_t comms[2] = {nullptr, nullptr};
  if (chorusCommInitAll(comms, 2, nullptr) != chorusSuccess) {
    state.SkipWithError("chorusCommInitAll failed");
    return;
  }
  auto run = [shapes](chorusComm_t c, int64_t* in, int64_t* out, int64_t* calls) {
    for (int k = 0; k < shapes; ++k) {
      const size_t at = static_cast<size_t>((*calls)++ % 32);
      callShape(k, c, in + at, out + at);
    }
  };
  const int64_t iterations = static_cast<int64_t>(state.max_iterations);
  std::thread peer([&] {
    std::vector<int64_t> in(64, 2), out(64, 0);
    int64_t calls = 0;
    for (int64_t i = 0; i < iterations; ++i) run(comms[1], in.data(), out.data(), &calls);
  });
  std::vector<int64_t> in(64, 1), out(64, 0);
  int64_t calls = 0;
  for (auto _ : state) run(comms[0], in.data(), out.data(), &calls);
  peer.join();
  state.counters["per_call"] =
      benchmark::Counter(static_cast<double>(calls), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  chorusCommDestroy(comms[0]);
  chorusCommDestroy(comms[1]);
}
BENCHMARK(BM_AlternatingOperationsTwoRanks)
    ->DenseRange(1, 5)
    ->Iterations(100000)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
