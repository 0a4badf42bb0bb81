// Previewing a machine you do not have: `chorus-topo --topo-file F --assume gpu=MODEL[,nvswitch] --assume nic=MODEL`
// fills the GPUs and NICs that a topology file lists by class code only (as cloud providers' files do) from a small
// table of models, so that the path matrix, rings, trees and GPU-NIC pairs Chorus would use on such a machine can
// be seen before it exists. Bandwidths are NCCL's constants: NVLink per link by compute capability
// (bandwidths.h: 20 GB/s for sm70 and sm80, 20.6 for sm90, 40.1 for sm100), NET = Mb/s / 8000, PCIe width x rate /
// 80. Devices the file describes itself (<gpu>, <nic>) are never changed; the returned lines say what was filled.
//
// The filled elements are what detection would have written (topo_merge.h's fill functions do the work): GPU devs
// and NET devs are the smallest numbers the file does not use, in bus id order; with `nvswitch` each GPU gets the
// model's NVLinks to its host's NVSwitch fabric (the file's first NVSwitch-class device, or a placeholder bus id
// ffff:ff:ff.f); without it the GPUs talk over PCIe only, because a class-code file does not say which GPUs a
// bridge or mesh would join. A NIC model fills devices of its own class (ib-* InfiniBand HCAs, eth-* Ethernet
// NICs); when no NIC of the file has the class of any model given, the first model fills them all (RoCE and
// cloud NICs report the Ethernet class).
#pragma once

#include <string>
#include <vector>

#include "topology/pci_class.h"
#include "topology/xml_tree.h"

namespace chorus::topology {

struct GpuModel {
  const char* name;       // "a100-sxm4"
  const char* product;    // "A100-SXM4"
  int sm;                 // compute capability x10
  int nvlinks;            // NVLinks per GPU to an NVSwitch fabric
  const char* pcieSpeed;  // link_speed of the GPU's x16 link ("16.0 GT/s PCIe")
};

struct NicModel {
  const char* name;     // "ib-ndr400"
  const char* product;  // "InfiniBand NDR 400 Gb/s"
  PciKind kind;         // kIbHca or kEthernet
  long mbps;            // port speed
  const char* pcieSpeed;
  int gdr;
};

const std::vector<GpuModel>& gpuModels();
const std::vector<NicModel>& nicModels();

struct Assumptions {
  const GpuModel* gpu = nullptr;
  bool nvswitch = false;
  std::vector<const NicModel*> nics;
  std::vector<std::string> given;  // the --assume values, as typed
  bool empty() const { return gpu == nullptr && nics.empty(); }
};

// Parses one --assume value ("gpu=a100-sxm4,nvswitch" or "nic=ib-hdr200") into *a. Throws chorus::Error (invalid
// argument) naming the value: an unknown key, model or option, a second GPU model, two NIC models of one class.
void parseAssumption(const std::string& value, Assumptions* a);

// Fills the class-code-only GPUs and NICs of every host of `system` (a <system> tree) and returns one line per
// model given ("--assume gpu=a100-sxm4,nvswitch: filled 8 GPU(s) ..." or "...: nothing to fill: the file describes
// its 8 GPU(s) itself (unchanged)") plus a line for the devices no model covered.
std::vector<std::string> applyAssumptions(XmlElement& system, const Assumptions& a);

}  // namespace chorus::topology
