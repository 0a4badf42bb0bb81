#include "topology/pci_class.h"

#include <cctype>
#include <cstdio>

namespace chorus::topology {

bool parsePciClass(const std::string& text, int* cls) {
  size_t start = text.rfind("0x", 0) == 0 || text.rfind("0X", 0) == 0 ? 2 : 0;
  if (text.size() <= start || text.size() - start > 6) return false;
  int v = 0;
  for (size_t i = start; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (!std::isxdigit(c)) return false;
    v = v * 16 + (std::isdigit(c) ? c - '0' : std::tolower(c) - 'a' + 10);
  }
  // NCCL matches class codes by prefix ("0x03" is a GPU), so a short code is the leading digits of the 24 bits.
  *cls = v << (4 * (6 - static_cast<int>(text.size() - start)));
  return true;
}

PciKind pciKind(int cls) {
  if (cls < 0) return PciKind::kUnknown;
  int base = cls >> 16, sub = (cls >> 8) & 0xff;
  if (base == 0x06 && sub == 0x04) return PciKind::kBridge;
  if (cls == 0x068000) return PciKind::kNvSwitch;
  if (base == 0x03) return PciKind::kGpu;
  if (base == 0x02 && sub == 0x07) return PciKind::kIbHca;
  if (base == 0x02 && sub == 0x00) return PciKind::kEthernet;
  if (base == 0x02) return PciKind::kNic;
  return PciKind::kOther;
}

const char* pciKindName(PciKind kind) {
  switch (kind) {
    case PciKind::kBridge: return "bridge";
    case PciKind::kGpu: return "GPU";
    case PciKind::kIbHca: return "IB HCA";
    case PciKind::kEthernet: return "Ethernet NIC";
    case PciKind::kNic: return "NIC";
    case PciKind::kNvSwitch: return "NVSwitch";
    default: return "device";
  }
}

std::string formatPciClass(int cls) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%06x", cls < 0 ? 0 : cls);
  return buf;
}

}  // namespace chorus::topology
