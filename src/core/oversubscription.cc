#include "core/oversubscription.h"

#include <algorithm>

namespace chorus::core {

bool ranksOutnumberCpus(const std::vector<CpuMask>& localMasks, int onlineCpus) {
  CpuMask all;
  bool unknown = false;
  for (const CpuMask& m : localMasks) {
    if (m.empty()) unknown = true;
    all |= m;
  }
  const int cpus = unknown ? std::max(onlineCpus, all.count()) : all.count();
  return static_cast<int>(localMasks.size()) > std::max(cpus, 1);
}

std::vector<CpuMask> localCpuMasks(const std::vector<transport::PeerInfo>& peers, uint64_t hostHash) {
  std::vector<CpuMask> masks;
  for (const transport::PeerInfo& p : peers) {
    if (p.hostHash == hostHash) masks.push_back(p.cpuMask);
  }
  return masks;
}

}  // namespace chorus::core
