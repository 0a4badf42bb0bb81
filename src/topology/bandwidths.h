// Link bandwidths as NCCL derives them (graph/topo.h), in GB/s.
#pragma once

#include <string>

#include "topology/graph.h"

namespace chorus::topology {

constexpr double kLocBw = 5000.0;  // inside a node (LOC links, one-GPU rings)
constexpr double kPciGen3x16Bw = 12.0;

// Bandwidth of one NVLink of a GPU of compute capability sm (x10: 80 for A100, 90 for H100).
double nvlinkBw(int sm);
// PCIe link: width x per-lane rate / 80, where the rate is NCCL's kvDictPciGen value of the link_speed text
// ("16.0 GT/s PCIe" -> 120). Returns false when the speed text is not understood (the caller logs and uses
// Gen3). width 0 means unknown and counts as 16.
bool pciLaneRate(const std::string& speed, int* rate);
double pciBw(int width, int rate);
// CPU interconnect (SYS link) bandwidth from the CPU's arch, vendor and model.
double cpuInterconnectBw(const Node& cpu);

}  // namespace chorus::topology
