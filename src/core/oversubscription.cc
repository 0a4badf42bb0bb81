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

bool anyHostOversubscribed(const std::vector<transport::PeerInfo>& peers) {
  std::vector<uint64_t> hosts;
  for (const transport::PeerInfo& p : peers) {
    if (std::find(hosts.begin(), hosts.end(), p.hostHash) == hosts.end()) hosts.push_back(p.hostHash);
  }
  for (uint64_t host : hosts) {
    const std::vector<CpuMask> masks = localCpuMasks(peers, host);
    const bool known = std::none_of(masks.begin(), masks.end(), [](const CpuMask& m) { return m.empty(); });
    if (known && ranksOutnumberCpus(masks, 0)) return true;
  }
  return false;
}

}  // namespace chorus::core
