#include "topology/tuning_inputs.h"

#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "base/logging.h"

namespace chorus::topology {
namespace {

// Simple-protocol base latencies of NCCL's model (µs).
constexpr double kRingBaseLatUs = 8.4;
constexpr double kTreeBaseLatUs = 8.4;
// Tree bandwidth is capped as NCCL does for Simple trees: it pipelines less well than a ring.
constexpr double kTreeEfficiency = 0.92;
// Host communicators: a memcpy through shared memory, one copy per hop and channel.
constexpr double kHostMemGBs = 8.0;
// Across NUMA nodes of one host (the CPU interconnect, as NCCL's QPI/AMD figures).
constexpr double kHostCrossNumaGBs = 6.0;
constexpr double kHostIntraLatUs = 2.0;
constexpr double kHostInterLatUs = 15.0;
constexpr double kDefaultNicGBs = 10.0 / 8.0;

std::string readFirstLine(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

}  // namespace

const char* tunedCollName(TunedColl coll) {
  static const char* kNames[] = {"AllReduce", "Broadcast", "Reduce", "AllGather", "ReduceScatter"};
  return kNames[static_cast<int>(coll)];
}

const char* tunedAlgoName(TunedAlgo algo) {
  return algo == TunedAlgo::kRing ? "Ring" : "Tree";
}

TuningInputs::TuningInputs(const SearchSummary& s) : summary_(s) {
  const int n = std::max(s.nRanks, 1);
  const int nHosts = std::max(s.nHosts, 1);
  const int nCh = std::max(s.nChannels, 1);
  const int ppn = std::max(n / nHosts, 1);
  // Ring: every channel moves its share at the ring's bottleneck; between hosts the NIC bandwidth per channel
  // bounds it.
  double ringBw = nCh * (nHosts > 1 && s.interBwGBs > 0 ? std::min(s.ringBwGBs, s.interBwGBs) : s.ringBwGBs);
  double treeBw = nCh * (s.treeBwGBs > 0 ? s.treeBwGBs : s.ringBwGBs) * kTreeEfficiency;
  int nInter = nHosts > 1 ? nHosts : 0;  // hops of one ring step that cross a host
  for (int c = 0; c < static_cast<int>(TunedColl::kCount); ++c) {
    auto coll = static_cast<TunedColl>(c);
    // Steps of one ring pass: all-reduce is a reduce-scatter then an all-gather.
    int nsteps = coll == TunedColl::kAllReduce ? 2 * (n - 1) : n - 1;
    double interSteps = std::min<double>(nsteps, nInter * (coll == TunedColl::kAllReduce ? 2 : 1));
    AlgoCost& ring = table_[c][static_cast<int>(TunedAlgo::kRing)];
    ring.busBwGBs = n > 1 ? ringBw : 0;
    ring.latencyUs = kRingBaseLatUs + (nsteps - interSteps) * s.intraLatUs + interSteps * s.interLatUs;
    AlgoCost& tree = table_[c][static_cast<int>(TunedAlgo::kTree)];
    if (coll == TunedColl::kAllReduce && n > 1) {
      tree.busBwGBs = treeBw;
      tree.latencyUs = kTreeBaseLatUs + 2 * ((ppn - 1) * s.intraLatUs + std::log2(nHosts) * s.interLatUs);
    }
  }
}

std::vector<std::string> TuningInputs::describe() const {
  std::vector<std::string> lines;
  for (int c = 0; c < static_cast<int>(TunedColl::kCount); ++c) {
    for (int a = 0; a < static_cast<int>(TunedAlgo::kCount); ++a) {
      const AlgoCost& cost = table_[c][a];
      if (cost.busBwGBs <= 0) continue;
      std::ostringstream os;
      os.setf(std::ios::fixed);
      os.precision(1);
      os << tunedCollName(static_cast<TunedColl>(c)) << " " << tunedAlgoName(static_cast<TunedAlgo>(a)) << " lat "
         << cost.latencyUs << " us busbw " << cost.busBwGBs << " GB/s";
      lines.push_back(os.str());
    }
  }
  return lines;
}

double hostNicGBs() {
  double best = 0;
  if (DIR* d = opendir("/sys/class/net")) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.empty() || name[0] == '.' || name == "lo") continue;
      std::string base = "/sys/class/net/" + name;
      if (readFirstLine(base + "/operstate") != "up") continue;
      long mbps = std::atol(readFirstLine(base + "/speed").c_str());
      if (mbps > 0) best = std::max(best, mbps / 8000.0);
    }
    closedir(d);
  }
  if (best <= 0) {
    CHORUS_LOG_INFO(kTuning, "no interface in /sys/class/net reports a speed; assuming 10 Gb/s");
    best = kDefaultNicGBs;
  }
  return best;
}

TuningInputs hostTuningInputs(const std::vector<RankPlace>& ranks, int nChannels, double nicGBs) {
  SearchSummary s;
  s.nRanks = static_cast<int>(ranks.size());
  std::set<uint64_t> hosts;
  std::set<std::pair<uint64_t, int>> numas;
  for (const auto& r : ranks) {
    hosts.insert(r.hostHash);
    numas.emplace(r.hostHash, r.numaNode);
  }
  s.nHosts = std::max<int>(1, static_cast<int>(hosts.size()));
  s.nChannels = std::max(nChannels, 1);
  s.ringBwGBs = numas.size() > hosts.size() ? kHostCrossNumaGBs : kHostMemGBs;
  // The NIC is shared by all channels of a host: each gets its share.
  s.interBwGBs = s.nHosts > 1 ? (nicGBs > 0 ? nicGBs : kDefaultNicGBs) / s.nChannels : 0;
  s.treeBwGBs = s.nHosts > 1 ? std::min(s.ringBwGBs, s.interBwGBs) : s.ringBwGBs;
  s.intraLatUs = kHostIntraLatUs;
  s.interLatUs = kHostInterLatUs;
  return TuningInputs(s);
}

}  // namespace chorus::topology
