// PCI class codes of the devices a topology file may list (`<pci class="0x030200">`): what kind of device each is.
// Cloud providers' topology files list GPUs and NICs only by class code, with no <gpu> or <nic> child; NCCL places
// the devices it detects at those bus ids. The kinds below are the ones Chorus shows and fills.
#pragma once

#include <string>

namespace chorus::topology {

enum class PciKind : int {
  kUnknown = 0,  // no class attribute
  kBridge,       // 0x0604xx: a PCI switch or root port
  kGpu,          // 0x03xxxx: display controller (3D controller 0x0302 for data-center GPUs)
  kIbHca,        // 0x0207xx: InfiniBand HCA
  kEthernet,     // 0x0200xx: Ethernet NIC (RoCE NICs and cloud NICs such as EFA report this class)
  kNic,          // 0x02xxxx: another network controller
  kNvSwitch,     // 0x068000: NVIDIA NVSwitch (a bridge of class "other")
  kOther,        // storage, other bridges, ...
};

// "0x030200" (or "030200") -> 0x030200; a shorter code is a prefix, as NCCL reads it ("0x0302" -> 0x030200,
// "0x03" -> 0x030000); false when the text is not a hex class code of at most six digits.
bool parsePciClass(const std::string& text, int* cls);
PciKind pciKind(int cls);
// "GPU", "IB HCA", "Ethernet NIC", "NIC", "NVSwitch", "bridge", "device".
const char* pciKindName(PciKind kind);
inline bool isNicKind(PciKind k) {
  return k == PciKind::kIbHca || k == PciKind::kEthernet || k == PciKind::kNic;
}
// "0x030200".
std::string formatPciClass(int cls);

}  // namespace chorus::topology
