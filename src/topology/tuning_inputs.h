// Tuning inputs: for each (collective, algorithm) the latency and bus bandwidth that the topology search found.
// The collectives' cost model reads these (time = latencyUs + bytes / (busBwGBs * 1e3) per algorithm-step
// scaled as in NCCL's tuning.cc); the numbers follow NCCL's model (its src/graph/tuning.cc) for the Simple
// protocol, the one protocol Chorus has.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "topology/host_order.h"

namespace chorus::topology {

enum class TunedColl : int { kAllReduce = 0, kBroadcast, kReduce, kAllGather, kReduceScatter, kCount };
enum class TunedAlgo : int { kRing = 0, kTree, kCount };

const char* tunedCollName(TunedColl coll);
const char* tunedAlgoName(TunedAlgo algo);

// One cell of the table. busBwGBs is 0 when the algorithm does not apply to the collective (as trees for
// all-gather).
struct AlgoCost {
  double latencyUs = 0;
  double busBwGBs = 0;
};

// What the search found, in the terms the model needs.
struct SearchSummary {
  int nRanks = 1;
  int nHosts = 1;
  int nChannels = 1;
  double ringBwGBs = 0;    // per channel, bottleneck of the ring inside a host (or the only bandwidth)
  double interBwGBs = 0;   // per channel across hosts (0 on one host)
  double treeBwGBs = 0;    // per channel, bottleneck of the tree (chain inside a host, NIC between hosts)
  double intraLatUs = 1;   // one hop inside a host
  double interLatUs = 10;  // one hop between hosts
};

class TuningInputs {
 public:
  TuningInputs() = default;
  explicit TuningInputs(const SearchSummary& summary);

  const AlgoCost& at(TunedColl coll, TunedAlgo algo) const {
    return table_[static_cast<int>(coll)][static_cast<int>(algo)];
  }
  const SearchSummary& summary() const { return summary_; }
  // One line per cell, "AllReduce Ring lat 12.3 us busbw 45.6 GB/s" (logged at INFO kTuning, printed by tools).
  std::vector<std::string> describe() const;

 private:
  SearchSummary summary_;
  std::array<std::array<AlgoCost, static_cast<int>(TunedAlgo::kCount)>, static_cast<int>(TunedColl::kCount)> table_{};
};

// Speed of the fastest up Ethernet or InfiniBand interface in /sys/class/net, in GB/s; 10 Gb/s (1.25 GB/s)
// when none reports a speed.
double hostNicGBs();

// Estimates for a host communicator from where its ranks live: ranks on one NUMA node copy through memory,
// ranks on different NUMA nodes of a host cross the CPU interconnect, ranks on different hosts go through the
// NIC (nicGBs; pass hostNicGBs()).
TuningInputs hostTuningInputs(const std::vector<RankPlace>& ranks, int nChannels, double nicGBs);

}  // namespace chorus::topology
