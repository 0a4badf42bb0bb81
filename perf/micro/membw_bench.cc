// The machine's memory bandwidth, the bound every host collective is measured against: a 64 MiB copy and a
// 64 MiB two-input float sum (the core of a reduction), on one and two threads at once. Bytes counted are
// the bytes the loop reads and writes (copy: 2 x 64 MiB; sum: 3 x 64 MiB), as STREAM counts them.
//
//   ./build/bin/membw_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <vector>

#include "collectives/reduce/reduce.h"

namespace {

constexpr size_t kBytes = 64u << 20;

struct Buffers {
  std::unique_ptr<float[]> a{new float[kBytes / 4]}, b{new float[kBytes / 4]}, c{new float[kBytes / 4]};
  Buffers() {
    for (size_t i = 0; i < kBytes / 4; ++i) a[i] = b[i] = c[i] = 1.0f;  // touch every page
  }
};

void BM_Copy64MiB(benchmark::State& state) {
  Buffers buf;
  for (auto _ : state) {
    memcpy(buf.c.get(), buf.a.get(), kBytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2 * kBytes);
}

// The copy Chorus uses for outputs larger than the cache: streaming stores, so the destination is written
// without being read first (memcpy here reads it: glibc takes this VM's 480 MiB L3 at its word and never
// switches to streaming stores).
void BM_CopyStreaming64MiB(benchmark::State& state) {
  Buffers buf;
  for (auto _ : state) {
    chorus::reduce::copyBytes(buf.c.get(), buf.a.get(), kBytes, /*nonTemporal=*/true);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2 * kBytes);
}

void BM_Sum64MiB(benchmark::State& state) {
  Buffers buf;
  const auto& k = chorus::reduce::kernels(chorus::reduce::DType::kFloat32, chorus::reduce::Op::kSum);
  chorus::reduce::ReduceParams p;
  for (auto _ : state) {
    k.reduce(buf.c.get(), buf.a.get(), buf.b.get(), kBytes / 4, p);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 3 * kBytes);
}

}  // namespace

BENCHMARK(BM_Copy64MiB)->Threads(1)->Threads(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CopyStreaming64MiB)->Threads(1)->Threads(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Sum64MiB)->Threads(1)->Threads(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
