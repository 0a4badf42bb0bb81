#include "topology/assume.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

#include "base/error.h"
#include "topology/bandwidths.h"
#include "topology/graph.h"
#include "topology/topo_merge.h"

namespace chorus::topology {
namespace {

// Where the NVLinks of assumed GPUs go when the file lists no NVSwitch device: any id no real device has.
constexpr const char* kPlaceholderNvSwitch = "ffff:ff:ff.f";

std::string fixed1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

template <typename Model>
std::string knownNames(const std::vector<Model>& models) {
  std::string s;
  for (const auto& m : models) s += std::string(s.empty() ? "" : ", ") + m.name;
  return s;
}

// One host's devices, collected before anything is filled (so that element pointers stay valid: only leaves get
// children).
struct HostDevices {
  std::set<int> gpuDevs, netDevs;            // devs the file already uses
  std::vector<XmlElement*> gpus, nics;       // devices listed by class code only
  int describedGpus = 0, describedNics = 0;  // devices with their <gpu> / <nic>
  std::string nvswitch;                      // the first NVSwitch-class device's bus id
};

int64_t busOf(const XmlElement& e) {
  int64_t id = -1;
  return e.attr("busid") != nullptr && parseBusId(*e.attr("busid"), &id) ? id : -1;
}

PciKind classKind(const XmlElement& e) {
  int cls = -1;
  return e.attr("class") != nullptr && parsePciClass(*e.attr("class"), &cls) ? pciKind(cls) : PciKind::kUnknown;
}

std::map<std::string, HostDevices> collectHosts(XmlElement& system) {
  std::map<std::string, HostDevices> hosts;
  std::function<void(XmlElement&, HostDevices&)> walk = [&](XmlElement& e, HostDevices& h) {
    for (auto& c : e.children) {
      if (c.name == "nic") {
        for (const auto& net : c.children)
          if (net.name == "net" && net.attr("dev")) h.netDevs.insert(std::atoi(net.attr("dev")->c_str()));
        ++h.describedNics;
        continue;
      }
      if (c.name != "pci") continue;
      PciKind kind = classKind(c);
      if (const XmlElement* gpu = c.child("gpu")) {
        if (gpu->attr("dev")) h.gpuDevs.insert(std::atoi(gpu->attr("dev")->c_str()));
        ++h.describedGpus;
      } else if (c.child("nic") == nullptr && c.child("pci") == nullptr) {
        if (kind == PciKind::kGpu) h.gpus.push_back(&c);
        if (isNicKind(kind)) h.nics.push_back(&c);
        if (kind == PciKind::kNvSwitch && h.nvswitch.empty() && busOf(c) >= 0) h.nvswitch = *c.attr("busid");
      }
      walk(c, h);
    }
  };
  for (auto& cpu : system.children) {
    if (cpu.name != "cpu") continue;
    const std::string* hash = cpu.attr("host_hash");
    walk(cpu, hosts[hash ? *hash : std::string()]);
  }
  auto byBus = [](const XmlElement* a, const XmlElement* b) { return busOf(*a) < busOf(*b); };
  for (auto& [hash, h] : hosts) {
    std::sort(h.gpus.begin(), h.gpus.end(), byBus);
    std::sort(h.nics.begin(), h.nics.end(), byBus);
  }
  return hosts;
}

int takeFree(std::set<int>& used) {
  int d = 0;
  while (used.count(d)) ++d;
  used.insert(d);
  return d;
}

XmlElement pciFor(const char* pcieSpeed) {
  XmlElement pci;
  pci.name = "pci";
  pci.set("link_speed", pcieSpeed);
  pci.set("link_width", "16");
  return pci;
}

XmlElement assumedGpu(const GpuModel& m, bool nvswitch, int dev, const std::string& nvswitchBus) {
  XmlElement pci = pciFor(m.pcieSpeed);
  XmlElement& gpu = pci.add("gpu");
  gpu.set("dev", std::to_string(dev));
  gpu.set("sm", std::to_string(m.sm));
  gpu.set("rank", std::to_string(dev));
  gpu.set("gdr", "1");
  if (nvswitch) {
    XmlElement& link = gpu.add("nvlink");
    link.set("target", nvswitchBus.empty() ? kPlaceholderNvSwitch : nvswitchBus);
    link.set("count", std::to_string(m.nvlinks));
    link.set("tclass", "0x068000");
  }
  return pci;
}

XmlElement assumedNic(const NicModel& m, int dev) {
  XmlElement pci = pciFor(m.pcieSpeed);
  XmlElement& net = pci.add("nic").add("net");
  net.set("name", std::string(m.name) + "_" + std::to_string(dev));
  net.set("dev", std::to_string(dev));
  net.set("speed", std::to_string(m.mbps));
  net.set("port", "1");
  net.set("latency", "0");
  net.set("guid", "0x0");
  net.set("maxconn", "131072");
  net.set("gdr", std::to_string(m.gdr));
  return pci;
}

}  // namespace

const std::vector<GpuModel>& gpuModels() {
  // NVLinks per GPU: V100 6 (NVLink 2), A100 12 (NVLink 3), H100/H200 and B200 18 (NVLink 4 and 5).
  static const std::vector<GpuModel> kModels = {
      {"v100-sxm2", "V100-SXM2", 70, 6, "8.0 GT/s PCIe"},   {"a100-sxm4", "A100-SXM4", 80, 12, "16.0 GT/s PCIe"},
      {"h100-sxm5", "H100-SXM5", 90, 18, "32.0 GT/s PCIe"}, {"h200-sxm", "H200-SXM", 90, 18, "32.0 GT/s PCIe"},
      {"b200-sxm", "B200-SXM", 100, 18, "32.0 GT/s PCIe"},
  };
  return kModels;
}

const std::vector<NicModel>& nicModels() {
  static const std::vector<NicModel> kModels = {
      {"ib-edr100", "InfiniBand EDR 100 Gb/s", PciKind::kIbHca, 100000, "8.0 GT/s PCIe", 1},
      {"ib-hdr200", "InfiniBand HDR 200 Gb/s", PciKind::kIbHca, 200000, "16.0 GT/s PCIe", 1},
      {"ib-ndr400", "InfiniBand NDR 400 Gb/s", PciKind::kIbHca, 400000, "32.0 GT/s PCIe", 1},
      {"eth-100g", "Ethernet 100 Gb/s", PciKind::kEthernet, 100000, "8.0 GT/s PCIe", 0},
      {"eth-200g", "Ethernet 200 Gb/s", PciKind::kEthernet, 200000, "16.0 GT/s PCIe", 0},
      {"eth-400g", "Ethernet 400 Gb/s", PciKind::kEthernet, 400000, "32.0 GT/s PCIe", 0},
  };
  return kModels;
}

void parseAssumption(const std::string& value, Assumptions* a) {
  size_t eq = value.find('=');
  std::string key = eq == std::string::npos ? value : value.substr(0, eq);
  CHORUS_CHECK_ARG(eq != std::string::npos && (key == "gpu" || key == "nic"), "--assume \"", value,
                   "\": expected gpu=MODEL[,nvswitch] or nic=MODEL");
  std::string rest = value.substr(eq + 1);
  std::string model = rest.substr(0, rest.find(','));
  std::vector<std::string> options;
  for (size_t pos = rest.find(','); pos != std::string::npos;) {
    size_t next = rest.find(',', pos + 1);
    options.push_back(rest.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1));
    pos = next;
  }
  if (key == "gpu") {
    auto it = std::find_if(gpuModels().begin(), gpuModels().end(), [&](const GpuModel& m) { return model == m.name; });
    CHORUS_CHECK_ARG(it != gpuModels().end(), "--assume ", value, ": unknown GPU model \"", model,
                     "\" (known: ", knownNames(gpuModels()), ")");
    CHORUS_CHECK_ARG(a->gpu == nullptr, "--assume ", value, ": a GPU model was given already (", a->gpu->name, ")");
    for (const auto& o : options)
      CHORUS_CHECK_ARG(o == "nvswitch", "--assume ", value, ": unknown option \"", o,
                       "\" (the one option is nvswitch)");
    a->gpu = &*it;
    a->nvswitch = !options.empty();
  } else {
    auto it = std::find_if(nicModels().begin(), nicModels().end(), [&](const NicModel& m) { return model == m.name; });
    CHORUS_CHECK_ARG(it != nicModels().end(), "--assume ", value, ": unknown NIC model \"", model,
                     "\" (known: ", knownNames(nicModels()), ")");
    CHORUS_CHECK_ARG(options.empty(), "--assume ", value, ": a NIC model takes no options");
    for (const NicModel* other : a->nics)
      CHORUS_CHECK_ARG(other->kind != it->kind, "--assume ", value, ": a NIC model of this class was given already (",
                       other->name, ")");
    a->nics.push_back(&*it);
  }
  a->given.push_back(value);
}

std::vector<std::string> applyAssumptions(XmlElement& system, const Assumptions& a) {
  std::vector<std::string> lines;
  auto hosts = collectHosts(system);
  int described = 0, classOnly = 0, describedNics = 0, classOnlyNics = 0;
  bool nicKindMatches = false;
  for (const auto& [hash, h] : hosts) {
    described += h.describedGpus;
    classOnly += static_cast<int>(h.gpus.size());
    describedNics += h.describedNics;
    classOnlyNics += static_cast<int>(h.nics.size());
    for (const XmlElement* nic : h.nics)
      for (const NicModel* m : a.nics) nicKindMatches = nicKindMatches || classKind(*nic) == m->kind;
  }

  if (a.gpu != nullptr) {
    const GpuModel& m = *a.gpu;
    int filled = 0;
    for (auto& [hash, h] : hosts) {
      for (XmlElement* pci : h.gpus) {
        detail::fillGpu(*pci, assumedGpu(m, a.nvswitch, takeFree(h.gpuDevs), h.nvswitch));
        ++filled;
      }
    }
    std::string what = std::string("--assume gpu=") + m.name + (a.nvswitch ? ",nvswitch" : "") + ": ";
    if (filled > 0) {
      what += "filled " + std::to_string(filled) + " GPU(s) as " + m.product + " (sm " + std::to_string(m.sm);
      if (a.nvswitch)
        what += ", " + std::to_string(m.nvlinks) + " NVLinks to the NVSwitch fabric, " + fixed1(nvlinkBw(m.sm)) +
                " GB/s each";
      else
        what += ", no NVLink: PCIe only";
      what += ")";
      if (described > 0) what += "; " + std::to_string(described) + " GPU(s) described by the file left unchanged";
    } else {
      what += described > 0 ? "nothing to fill: the file describes its " + std::to_string(described) +
                                  " GPU(s) itself (unchanged)"
                            : "nothing to fill: the file lists no GPU";
    }
    lines.push_back(what);
  } else if (classOnly > 0) {
    lines.push_back("--assume: " + std::to_string(classOnly) +
                    " GPU(s) listed by class code only stay undescribed (--assume gpu=MODEL[,nvswitch] fills them)");
  }

  std::map<const NicModel*, int> filledBy;
  int unfilled = 0;
  for (auto& [hash, h] : hosts) {
    for (XmlElement* pci : h.nics) {
      const NicModel* model = nullptr;
      for (const NicModel* m : a.nics)
        if (m->kind == classKind(*pci)) model = m;
      if (model == nullptr && !nicKindMatches && !a.nics.empty()) model = a.nics.front();
      if (model == nullptr) {
        ++unfilled;
        continue;
      }
      std::vector<std::string> dropped;
      detail::fillNic(*pci, assumedNic(*model, takeFree(h.netDevs)), &dropped);
      ++filledBy[model];
    }
  }
  for (const NicModel* m : a.nics) {
    std::string what = std::string("--assume nic=") + m->name + ": ";
    int n = filledBy[m];
    if (n > 0) {
      what += "filled " + std::to_string(n) + " NIC(s) as " + m->product + " (one port, " + fixed1(m->mbps / 8000.0) +
              " GB/s" + (nicKindMatches ? "" : "; the file's NICs are not of this model's class, filled anyway") + ")";
    } else {
      what += describedNics > 0 && classOnlyNics == 0
                  ? "nothing to fill: the file describes its NIC(s) itself (unchanged)"
                  : std::string("nothing to fill: the file lists no ") + pciKindName(m->kind) + " by class code";
    }
    lines.push_back(what);
  }
  if (unfilled > 0)
    lines.push_back("--assume: " + std::to_string(unfilled) + " NIC(s) listed by class code only stay undescribed" +
                    (a.nics.empty() ? " (--assume nic=MODEL fills them)" : " (no model of their class was given)"));
  return lines;
}

}  // namespace chorus::topology
