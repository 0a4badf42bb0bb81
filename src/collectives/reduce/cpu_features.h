// Internal: what this CPU (and its OS, through XCR0) lets the kernels use.
#pragma once

#include "collectives/reduce/reduce.h"

namespace chorus::reduce {

struct CpuFeatures {
  bool avx2 = false;        // AVX2 and F16C, with YMM state enabled by the OS
  bool avx512 = false;      // AVX-512 F, BW, DQ and VL, with ZMM and opmask state enabled by the OS
  bool avx512Bf16 = false;  // AVX512_BF16 on top of avx512
};

// Read once with CPUID and XGETBV.
const CpuFeatures& cpuFeatures();
// The best ISA of this CPU, ignoring CHORUS_ISA.
Isa hardwareIsa();
bool isaSupported(Isa isa);
// Parses an ISA name as isaName() prints it; false for anything else.
bool parseIsa(const char* name, Isa* isa);
// bestIsa()'s rule: the CHORUS_ISA value (if any and valid) lowers the hardware ISA, never raises it.
Isa chooseIsa(Isa hardware, const char* override);

}  // namespace chorus::reduce
