#include "collectives/reduce/cpu_features.h"

#include <cpuid.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/logging.h"
#include "base/params.h"

namespace chorus::reduce {
namespace {

// XCR0: which register state the OS saves on context switch. A CPU may support AVX-512 while the OS (or a
// hypervisor) does not enable it; using it then faults, so CPUID alone is not enough.
uint64_t readXcr0() {
  uint32_t lo = 0;
  uint32_t hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

CpuFeatures detect() {
  CpuFeatures f;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
  const bool osxsave = ecx & bit_OSXSAVE;
  const bool avx = ecx & bit_AVX;
  const bool f16c = ecx & bit_F16C;
  if (!osxsave || !avx) return f;
  const uint64_t xcr0 = readXcr0();
  const bool ymmState = (xcr0 & 0x6) == 0x6;    // SSE and AVX state
  const bool zmmState = (xcr0 & 0xe6) == 0xe6;  // plus opmask, ZMM_Hi256, Hi16_ZMM
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return f;
  f.avx2 = ymmState && f16c && (ebx & bit_AVX2);
  const unsigned kAvx512Bits = bit_AVX512F | bit_AVX512BW | bit_AVX512DQ | bit_AVX512VL;
  f.avx512 = f.avx2 && zmmState && (ebx & kAvx512Bits) == kAvx512Bits;
  if (f.avx512 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) f.avx512Bf16 = eax & bit_AVX512BF16;
  return f;
}

}  // namespace

const CpuFeatures& cpuFeatures() {
  static const CpuFeatures features = detect();
  return features;
}

Isa hardwareIsa() {
  const CpuFeatures& f = cpuFeatures();
  if (f.avx512) return Isa::kAvx512;
  if (f.avx2) return Isa::kAvx2;
  return Isa::kSse2;  // part of x86-64
}

bool isaSupported(Isa isa) {
  return static_cast<int>(isa) <= static_cast<int>(hardwareIsa());
}

bool parseIsa(const char* name, Isa* isa) {
  for (Isa candidate : {Isa::kScalar, Isa::kSse2, Isa::kAvx2, Isa::kAvx512}) {
    if (std::strcmp(name, isaName(candidate)) == 0) {
      *isa = candidate;
      return true;
    }
  }
  return false;
}

Isa chooseIsa(Isa hardware, const char* override) {
  if (override == nullptr || *override == '\0') return hardware;
  Isa wanted;
  if (!parseIsa(override, &wanted)) {
    CHORUS_LOG(LogLevel::kWarn, kEnv, "CHORUS_ISA=", override, " is not one of scalar, sse2, avx2, avx512; using ",
               isaName(hardware));
    return hardware;
  }
  return static_cast<int>(wanted) < static_cast<int>(hardware) ? wanted : hardware;
}

// CHORUS_ISA is read here rather than through base/params.def (which another layer owns): it is read once,
// and only lowers the choice, for benchmarks and for reproducing a problem seen on an older CPU.
Isa bestIsa() {
  static const Isa isa = [] {
    const std::string forced = param::Isa();  // CHORUS_ISA
    return chooseIsa(hardwareIsa(), forced.empty() ? nullptr : forced.c_str());
  }();
  return isa;
}

}  // namespace chorus::reduce
