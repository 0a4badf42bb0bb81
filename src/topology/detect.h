// Detection of the running machine's topology, written as NCCL's topology XML (topo_xml.h) so that the dump
// (CHORUS_TOPO_DUMP_FILE) and a loaded file go through the same graph builder.
//
// Sources, each optional (a missing one is logged at INFO and skipped):
// - hwloc (when the build has it) for CPU packages, NUMA nodes and their core sets; sysfs otherwise;
// - sysfs for the PCI tree above each device of interest, link speeds and widths, NUMA affinity;
// - NVML (dlopen libnvidia-ml.so.1) for GPUs, their compute capability and NVLinks;
// - ibverbs (dlopen libibverbs.so.1) for HCAs and their port speeds;
// - /sys/class/net for Ethernet interfaces and their speeds.
#pragma once

#include <string>

#include "topology/xml_tree.h"

namespace chorus::topology {

XmlElement detectTopology();

namespace detail {

// Builds the <system> tree: CPUs by NUMA node, PCI chains under them. Shared by the detection sources.
class XmlBuilder {
 public:
  XmlBuilder();
  XmlElement& system() { return system_; }
  // The <cpu> element of a NUMA node, created on first use (attributes filled by the CPU source).
  XmlElement& cpu(int numa);
  // The <pci> element of a device, with <pci> elements for the bridges above it (from sysfs), under the CPU
  // of its NUMA node; nullptr when sysfs does not know the bus id.
  XmlElement* pci(const std::string& busId);
  int netCount() const { return netDevs_; }
  int nextNetDev() { return netDevs_++; }

 private:
  XmlElement system_;
  int netDevs_ = 0;
};

void detectCpus(XmlBuilder& b);
void detectGpus(XmlBuilder& b);
void detectIbNics(XmlBuilder& b);
void detectEthernetNics(XmlBuilder& b);

// First line of a small sysfs file, "" when unreadable.
std::string readSysfs(const std::string& path);
// "0000:07:00.0" -> the device's sysfs path components from the root complex down (bus ids only).
std::vector<std::string> pciChain(const std::string& busId);
// Lower-cased "dddd:bb:dd.f" from NVML's "00000000:07:00.0" and similar forms.
std::string normalizeBusId(const std::string& busId);

}  // namespace detail
}  // namespace chorus::topology
