#include "topology/bandwidths.h"

#include <cstdlib>

namespace chorus::topology {

double nvlinkBw(int sm) {
  if (sm >= 100) return 40.1;
  if (sm >= 90) return 20.6;
  if (sm == 86) return 12.0;
  if (sm >= 80) return 20.0;
  if (sm >= 70) return 20.0;
  if (sm >= 60) return 18.0;
  return 20.0;  // unknown: as NCCL, the sm80 figure
}

bool pciLaneRate(const std::string& speed, int* rate) {
  // The number before "GT/s" selects the generation; the suffix (" PCIe", kernel dependent) is irrelevant.
  char* end = nullptr;
  double gts = std::strtod(speed.c_str(), &end);
  if (end == speed.c_str()) return false;
  struct Gen {
    double gts;
    int rate;
  };
  static const Gen kGens[] = {{2.5, 15}, {5.0, 30}, {8.0, 60}, {16.0, 120}, {32.0, 240}, {64.0, 480}};
  for (const Gen& g : kGens) {
    if (gts > g.gts - 0.01 && gts < g.gts + 0.01) {
      *rate = g.rate;
      return true;
    }
  }
  return false;
}

double pciBw(int width, int rate) {
  return (width == 0 ? 16 : width) * rate / 80.0;
}

double cpuInterconnectBw(const Node& cpu) {
  switch (cpu.arch) {
    case CpuArch::kPower: return 32.0;
    case CpuArch::kArm: return 6.0;
    case CpuArch::kX86:
      if (cpu.vendor == CpuVendor::kAmd) return 16.0;
      if (cpu.vendor == CpuVendor::kZhaoxin) return cpu.familyId == 7 && cpu.modelId == 0x5B ? 9.0 : 6.0;
      if (cpu.vendor == CpuVendor::kIntel) {
        if (cpu.familyId != 6) return 6.0;
        int m = cpu.modelId;
        if (m >= 0xCF || m == 0xAD || m == 0xAE || m == 0xAF) return 40.0;  // Emerald/Granite Rapids
        if (m >= 0x8F) return 22.0;                                         // Sapphire Rapids
        if (m >= 0x55) return 10.0;                                         // Skylake
        return 6.0;                                                         // Broadwell and older
      }
      return 6.0;
    default: return 6.0;
  }
}

}  // namespace chorus::topology
