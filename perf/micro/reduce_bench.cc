// Host reduction kernels: dst = local + remote for two inputs of 64 KiB (cache resident, as a pipeline chunk)
// and 64 MiB (memory bound), per type and ISA, next to memcpy of the same number of bytes.
//
// bytes_per_second counts the bytes of one input buffer per iteration (the algorithm bandwidth an
// all-reduce step sees); the memory traffic is 3x that for a reduction (two reads, one write) and 2x for memcpy.
//
//   ninja -C build-red reduce_bench && build-red/bin/reduce_bench --benchmark_filter=float32
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "collectives/reduce/cpu_features.h"
#include "collectives/reduce/reduce.h"

namespace chorus::reduce {
namespace {

constexpr size_t kSizes[] = {64 << 10, 64 << 20};
constexpr DType kTypes[] = {DType::kFloat32, DType::kBfloat16, DType::kFloat16, DType::kInt32, DType::kFloat8e4m3};

// Page-aligned buffers filled with small values (no NaN, no overflow), reused across benchmarks.
struct Buffers {
  uint8_t* local;
  uint8_t* remote;
  uint8_t* dst;
};

uint8_t* allocBuffer(size_t bytes) {
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(4096, bytes));
  std::memset(p, 0, bytes);
  return p;
}

Buffers& buffers() {
  static Buffers b = [] {
    const size_t bytes = kSizes[1];
    Buffers out{allocBuffer(bytes), allocBuffer(bytes), allocBuffer(bytes)};
    // 0x3c / 0x3f: 1.0-ish in every type here (bf16/fp16/fp32 high bytes, e4m3 1.5); no special values.
    for (size_t i = 0; i < bytes; ++i) {
      out.local[i] = (i % 2) ? 0x3c : 0x00;
      out.remote[i] = (i % 2) ? 0x3f : 0x00;
    }
    return out;
  }();
  return b;
}

std::string sizeName(size_t bytes) {
  return bytes >= (1 << 20) ? std::to_string(bytes >> 20) + "MiB" : std::to_string(bytes >> 10) + "KiB";
}

void benchReduce(benchmark::State& state, DType t, Isa isa, size_t bytes) {
  const Kernels& k = kernels(t, Op::kSum, isa);
  Buffers& b = buffers();
  const size_t n = bytes / dtypeSize(t);
  const ReduceParams p;
  for (auto _ : state) {
    k.reduce(b.dst, b.local, b.remote, n, p);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

void benchMemcpy(benchmark::State& state, size_t bytes) {
  Buffers& b = buffers();
  for (auto _ : state) {
    std::memcpy(b.dst, b.local, bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

void benchCopyBytes(benchmark::State& state, size_t bytes, bool nonTemporal) {
  Buffers& b = buffers();
  for (auto _ : state) {
    copyBytes(b.dst, b.local, bytes, nonTemporal);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

void registerAll() {
  for (size_t bytes : kSizes) {
    benchmark::RegisterBenchmark(("memcpy/" + sizeName(bytes)).c_str(), benchMemcpy, bytes);
    benchmark::RegisterBenchmark(("copyBytes_nt/" + sizeName(bytes)).c_str(), benchCopyBytes, bytes, true);
    for (DType t : kTypes) {
      for (Isa isa : {Isa::kScalar, Isa::kSse2, Isa::kAvx2, Isa::kAvx512}) {
        if (!isaSupported(isa)) continue;
        const std::string name = std::string("sum/") + dtypeName(t) + "/" + isaName(isa) + "/" + sizeName(bytes);
        benchmark::RegisterBenchmark(name.c_str(), benchReduce, t, isa, bytes);
      }
    }
  }
}

}  // namespace
}  // namespace chorus::reduce

int main(int argc, char** argv) {
  chorus::reduce::registerAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
