// GPU-NIC affinity: for every GPU the NIC port (NET node) it should use to leave or enter its host, as NCCL's
// ncclTopoGetLocalNet picks it: the NETs of the GPU's host with the closest path type (PIX, then PXB, then PHB,
// then SYS; Paths gives the type of the whole route GPU -> switches -> NIC -> NET), then the highest path
// bandwidth. When several NETs remain (two HCAs under the switch of two GPUs, or NICs under the CPU of several
// GPUs), the GPUs that share the same set of candidates take them in turn in dev order, so two GPUs and two NICs
// under one switch pair one to one and the NICs' load is spread.
#pragma once

#include <vector>

#include "topology/graph.h"
#include "topology/paths.h"

namespace chorus::topology {

struct GpuNic {
  int gpu = -1;  // GPU node
  int net = -1;  // NET node, -1 when the GPU's host has no NIC
  PathType type = PathType::kDis;
  double bw = 0;             // bottleneck bandwidth of the GPU -> NET path, GB/s
  std::vector<int> closest;  // every NET as close as `net` (same type and bandwidth), in dev order
};

// One entry per GPU, in Graph::ofType(NodeType::kGpu) order.
std::vector<GpuNic> gpuNicAffinity(const Graph& graph, const Paths& paths);

}  // namespace chorus::topology
