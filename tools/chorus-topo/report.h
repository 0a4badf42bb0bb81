// chorus-topo's views of a system and its searched channels: indented text, one JSON document, Graphviz.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "topology/paths.h"
#include "topology/search.h"
#include "topology/system.h"

namespace chorus::tools {

struct Report {
  const topology::System& system;
  const topology::Paths& paths;
  const topology::SearchResult& result;
  // On one host with NICs: the channels each host of a multi-node job would use (through the NICs); else null.
  const topology::SearchResult* multiNode = nullptr;
};

void printText(const Report& r, std::ostream& os);
void printJson(const Report& r, std::ostream& os);
void printDot(const Report& r, std::ostream& os);

// What a ring's order and a tree's entries print as: the dev on one host, the rank (position in the GPU list)
// on several.
int gpuLabel(const Report& r, int position);
std::string gbs(double bw);

// One PCI device of the system: a GPU, a NIC, or a device listed by class code only.
struct DeviceRow {
  int node = -1;
  std::string kind;      // "GPU", "IB HCA", "Ethernet NIC", "NIC", "NVSwitch", "device"
  std::string busId;     // "-" for a NIC without a PCI device
  std::string pciClass;  // "0x030200", or "-" when the file gives none
  std::string parent;    // "switch 0000:10:00.0" or "CPU 0"
  int host = 0;
  int numa = -1;
  std::string what;  // "GPU/0 sm80", "NET/0 (mlx5_0) 25.0 GB/s", "class code only"
};
// Every GPU, NIC and class-code device, by host, NUMA node and bus id.
std::vector<DeviceRow> deviceRows(const topology::Graph& g);

// "NET/0 > 0 1 2 3 > NET/1" per host (joined by " | ") for a channel through NICs; "0 1 2 3" otherwise.
std::string channelText(const Report& r, const topology::SearchResult& res, const topology::RingChannel& ring);

}  // namespace chorus::tools
