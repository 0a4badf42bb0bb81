// The CPUs a thread may run on (its affinity mask), as plain data of fixed size so that ranks can exchange it
// at init: whether the ranks of one host outnumber the CPUs they may use is a property of all of them
// together, not of one rank's mask (a rank bound to one core of two is not oversubscribed).
#pragma once

#include <cstdint>

namespace chorus {

struct CpuMask {
  static constexpr int kWords = 16;  // CPUs 0-1023, as glibc's cpu_set_t
  uint64_t words[kWords] = {};

  // Adds `cpu` (ignored outside [0, 1024)).
  void set(int cpu);
  bool test(int cpu) const;
  // Number of CPUs in the mask.
  int count() const;
  bool empty() const { return count() == 0; }
  CpuMask& operator|=(const CpuMask& other);
};

// The calling thread's affinity mask (sched_getaffinity); empty when it cannot be read.
CpuMask currentCpuMask();

// CPUs online on this host (at least 1).
int onlineCpus();

}  // namespace chorus
