// Internal: the per-ISA kernel tables that dispatch.cc chooses from. Each kernels_<isa>.cc defines its table
// from the same source (kernels_impl.h) in a namespace named after the ISA.
#pragma once

#include <cstddef>

#include "collectives/reduce/reduce.h"

namespace chorus::reduce {

struct IsaTable {
  Kernels kernels[kNumDTypes][kNumOps];
  // Copies with streaming stores; dst need not be aligned.
  void (*copyStreaming)(void* dst, const void* src, size_t n);
};

namespace scalar {
extern const IsaTable kTable;
}
namespace sse2 {
extern const IsaTable kTable;
}
namespace avx2 {
extern const IsaTable kTable;
}
namespace avx512 {
extern const IsaTable kTable;  // bfloat16 rounded in software
}
namespace avx512bf16 {
extern const Kernels kBf16Row[kNumOps];  // bfloat16 kernels using vcvtneps2bf16 (AVX512_BF16)
}

}  // namespace chorus::reduce
