// Chooses a kernel table by ISA. The tables are constant-initialized (no static-init order to worry about) and
// the choice is a couple of loads, cheap enough to make per call; callers may still cache the Kernels&.
#include <cstring>

#include "base/error.h"
#include "collectives/reduce/cpu_features.h"
#include "collectives/reduce/kernel_tables.h"
#include "collectives/reduce/reduce.h"

namespace chorus::reduce {
namespace {

const IsaTable& tableFor(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return scalar::kTable;
    case Isa::kSse2: return sse2::kTable;
    case Isa::kAvx2: return avx2::kTable;
    case Isa::kAvx512: return avx512::kTable;
  }
  return scalar::kTable;
}

// The kernels for type t and op `op` on `isa` (supported by this CPU); bf16: the CPU has AVX-512 BF16.
const Kernels& lookUp(DType t, Op op, Isa isa, bool bf16) {
  const int ti = static_cast<int>(t);
  const int oi = static_cast<int>(op);
  CHORUS_CHECK_ARG(ti >= 0 && ti < kNumDTypes, "invalid data type ", ti);
  CHORUS_CHECK_ARG(oi >= 0 && oi < kNumOps, "invalid reduction op ", oi);
  if (isa == Isa::kAvx512 && t == DType::kBfloat16 && bf16) return avx512bf16::kBf16Row[oi];
  return tableFor(isa).kernels[ti][oi];
}

}  // namespace

const Kernels& kernels(DType t, Op op, Isa isa) {
  CHORUS_CHECK_ARG(isaSupported(isa), "ISA ", isaName(isa), " is not supported by this CPU");
  return lookUp(t, op, isa, cpuFeatures().avx512Bf16);
}

const Kernels& kernels(DType t, Op op) {
  // Called once per collective: the best ISA is supported by construction (chooseIsa only lowers the hardware's),
  // and the ISA and the CPU's features are looked up once.
  static const Isa isa = bestIsa();
  static const bool bf16 = cpuFeatures().avx512Bf16;
  return lookUp(t, op, isa, bf16);
}

void copyStreamingBytes(void* dst, const void* src, size_t n) {
  tableFor(bestIsa()).copyStreaming(dst, src, n);
}

}  // namespace chorus::reduce
