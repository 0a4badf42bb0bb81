#include "base/cpu_mask.h"

#include <sched.h>
#include <unistd.h>

#include <bit>

namespace chorus {

void CpuMask::set(int cpu) {
  if (cpu >= 0 && cpu < kWords * 64) words[cpu / 64] |= uint64_t{1} << (cpu % 64);
}

bool CpuMask::test(int cpu) const {
  return cpu >= 0 && cpu < kWords * 64 && (words[cpu / 64] >> (cpu % 64) & 1) != 0;
}

int CpuMask::count() const {
  int n = 0;
  for (uint64_t w : words) n += std::popcount(w);
  return n;
}

CpuMask& CpuMask::operator|=(const CpuMask& other) {
  for (int i = 0; i < kWords; ++i) words[i] |= other.words[i];
  return *this;
}

CpuMask currentCpuMask() {
  CpuMask mask;
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) return mask;
  for (int cpu = 0; cpu < CPU_SETSIZE && cpu < CpuMask::kWords * 64; ++cpu) {
    if (CPU_ISSET(cpu, &cpus)) mask.set(cpu);
  }
  return mask;
}

int onlineCpus() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace chorus
