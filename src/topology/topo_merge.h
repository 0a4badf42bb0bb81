// Merging this machine's detection into a topology file, as NCCL does with NCCL_TOPO_FILE.
//
// The file gives the PCI placement: NUMA nodes, switches, link widths, and the bus id of every GPU and NIC (cloud
// providers' files list them by class code only, `<pci busid class="0x030200"/>`). Detection (detect.h) gives what
// is at those bus ids. Merging
// - fills every device detection finds at a bus id the file lists: a GPU's <gpu> (dev, sm, NVLinks to GPUs and
//   NVSwitches; the file's own NVLinks are kept when it has some), a NIC's <nic> with its ports and speeds, and
//   the PCI attributes the file leaves out (link speed and width) and the CPU attributes (affinity, vendor);
// - keeps a device the file lists but detection did not find as a PCI device of its class (its <gpu> or <nic>
//   child, which would describe hardware this machine lacks, is removed), and reports it: never dropped silently;
// - adds a detected device the file does not list where detection places it (under the deepest switch of its
//   detected PCI chain that the file lists, else under its NUMA node's CPU), and reports it.
// GPU devs and NET devs come from detection, so they match CUDA's and the network's numbering on this machine.
// Only the file's CPUs of this host are merged (host_hash equal to this host's, or absent); when every CPU names
// another host, the file's first host is taken as this machine.
//
// Everything here is a function of two XML trees: tests inject detection results as XML (a fake detector).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "topology/xml_tree.h"

namespace chorus::topology {

struct MergeEntry {
  std::string kind;    // "GPU", "IB HCA", "Ethernet NIC", "NIC"
  std::string busId;   // "0000:07:00.0"; empty for a NIC without a PCI device (a virtual interface)
  std::string detail;  // what was filled, where it was added, or why it is missing
};

struct MergeReport {
  std::vector<MergeEntry> filled;   // devices of the file that detection described
  std::vector<MergeEntry> added;    // detected devices the file does not list
  std::vector<MergeEntry> missing;  // devices of the file this machine lacks, kept as PCI devices of their class
  std::vector<std::string> notes;   // INFO-level remarks (virtual interfaces, the host the file was matched to)
  // "GPU 0000:07:00.0: filled: sm 80, ..." lines: filled, then added, then missing, then notes.
  std::vector<std::string> describe() const;
};

// Merges `detected` (this machine, as detectTopology() writes it) into `file` in place.
MergeReport mergeDetected(XmlElement& file, const XmlElement& detected, uint64_t localHostHash);

namespace detail {

// Sets on `to` every attribute of `from` that `to` lacks, except those in `skip`.
void fillMissingAttrs(XmlElement& to, const XmlElement& from, std::initializer_list<const char*> skip = {});
// Describes the file's device element `pci` with the detected (or assumed) element `det`, a <pci> with a <gpu>
// child: the GPU's dev and rank from `det`, its other attributes and NVLinks from the file where it has them.
// Returns a short description ("sm 80, 12 NVLink(s) to NVSwitch").
std::string fillGpu(XmlElement& pci, const XmlElement& det);
// The same for a NIC: `det` has a <nic> child. Ports are matched by name and port number; the file's ports that `det`
// lacks are removed and listed in *dropped. Returns "1 port(s): mlx5_0 200 Gb/s".
std::string fillNic(XmlElement& pci, const XmlElement& det, std::vector<std::string>* dropped);
// The kind of device a <pci> element stands for: its class code, or its <gpu>/<nic> child when it has no class.
std::string deviceKindName(const XmlElement& pci);

}  // namespace detail
}  // namespace chorus::topology
