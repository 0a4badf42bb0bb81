#include "topology/topo_xml.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <set>

#include "base/error.h"
#include "base/logging.h"
#include "topology/bandwidths.h"
#include "topology/pci_class.h"

namespace chorus::topology {
namespace {

// Limits beyond which a value is not a real machine's.
constexpr long kMaxNetMbps = 3200000;  // 3.2 Tb/s
constexpr long kMaxNvlinkCount = 64;
constexpr long kMaxPciWidth = 32;
constexpr long kMaxC2cMBps = 4000000;
constexpr long kMaxDev = 4096;

class Builder {
 public:
  Builder(const std::string& source) : source_(source) {}

  Graph build(const XmlElement& root) {
    if (root.name != "system") fail(root, "the root element must be <system>");
    for (const auto& c : root.children) {
      if (c.name == "cpu")
        addCpu(c);
      else
        ignored(c);
    }
    if (graph_.ofType(NodeType::kCpu).empty()) fail(root, "no <cpu> element: the topology is empty");
    for (const auto& pending : nvlinks_) addNvlink(pending);
    for (const auto& pending : pcilinks_) addPcilink(pending);
    connectCpus();
    return std::move(graph_);
  }

 private:
  struct Pending {
    const XmlElement* element;
    int from;
  };

  [[noreturn]] void fail(const XmlElement& e, const std::string& msg) const {
    CHORUS_THROW(Status::kInvalidArgument, "topology file ", source_, ", line ", e.line, ", element <", e.name,
                 ">: ", msg);
  }
  void ignored(const XmlElement& e) const {
    CHORUS_LOG_INFO(kGraph, "topology file ", source_, ", line ", e.line, ": ignoring unknown element <", e.name, ">");
  }
  void checkAttrs(const XmlElement& e, std::initializer_list<const char*> known) const {
    for (const auto& kv : e.attrs) {
      bool ok = false;
      for (const char* k : known) ok = ok || kv.first == k;
      if (!ok)
        CHORUS_LOG_INFO(kGraph, "topology file ", source_, ", line ", e.line, ": ignoring attribute ", kv.first,
                        " of <", e.name, ">");
    }
  }

  // Integer attribute (decimal or 0x hex). Missing: def, or an error when required.
  long intAttr(const XmlElement& e, const char* key, long def, bool required = false) const {
    const std::string* v = e.attr(key);
    if (v == nullptr) {
      if (required) fail(e, std::string("missing attribute ") + key);
      return def;
    }
    errno = 0;
    char* end = nullptr;
    long x = std::strtol(v->c_str(), &end, 0);
    if (v->empty() || *end != '\0' || errno != 0)
      fail(e, std::string("attribute ") + key + "=\"" + *v + "\" is not an integer");
    return x;
  }
  int64_t busIdAttr(const XmlElement& e, const char* key) const {
    const std::string* v = e.attr(key);
    if (v == nullptr) fail(e, std::string("missing attribute ") + key);
    int64_t id;
    if (!parseBusId(*v, &id)) fail(e, std::string("attribute ") + key + "=\"" + *v + "\" is not a PCI bus id");
    return id;
  }

  void addCpu(const XmlElement& e) {
    checkAttrs(e, {"numaid", "affinity", "arch", "vendor", "familyid", "modelid", "host_hash", "affinity_offset"});
    Node cpu;
    cpu.type = NodeType::kCpu;
    uint64_t hash = 0;
    if (const std::string* h = e.attr("host_hash")) hash = std::strtoull(h->c_str(), nullptr, 16);
    cpu.host = graph_.hostIndex(hash);
    cpu.index = static_cast<int>(intAttr(e, "numaid", 0));
    if (cpu.index < 0) cpu.index = 0;  // NCCL writes -1 on machines without NUMA information
    if (cpu.index > kMaxDev) fail(e, "numaid " + std::to_string(cpu.index) + " is absurd");
    if (graph_.findByIndex(NodeType::kCpu, cpu.host, cpu.index) >= 0)
      fail(e, "cpu numaid " + std::to_string(cpu.index) + " appears twice");
    const std::string* arch = e.attr("arch");
    const std::string* vendor = e.attr("vendor");
    if (arch && *arch == "x86_64") cpu.arch = CpuArch::kX86;
    if (arch && (*arch == "arm64" || *arch == "aarch64")) cpu.arch = CpuArch::kArm;
    if (arch && arch->rfind("ppc64", 0) == 0) cpu.arch = CpuArch::kPower;
    if (vendor && *vendor == "GenuineIntel") cpu.vendor = CpuVendor::kIntel;
    if (vendor && *vendor == "AuthenticAMD") cpu.vendor = CpuVendor::kAmd;
    if (vendor && (*vendor == "CentaurHauls" || *vendor == "  Shanghai  ")) cpu.vendor = CpuVendor::kZhaoxin;
    cpu.familyId = static_cast<int>(intAttr(e, "familyid", 0));
    cpu.modelId = static_cast<int>(intAttr(e, "modelid", 0));
    cpu.name = (vendor ? *vendor : std::string()) + (arch ? " " + *arch : std::string());
    if (cpu.familyId != 0 || cpu.modelId != 0)
      cpu.name += " family " + std::to_string(cpu.familyId) + " model " + std::to_string(cpu.modelId);
    if (const std::string* aff = e.attr("affinity")) {
      int cpus = 0;
      for (char ch : *aff)
        if (std::isxdigit(static_cast<unsigned char>(ch)))
          cpus +=
              __builtin_popcount(std::isdigit(static_cast<unsigned char>(ch)) ? ch - '0' : std::tolower(ch) - 'a' + 10);
      cpu.name += ", affinity " + *aff + " (" + std::to_string(cpus) + " CPUs)";
    }
    int id = graph_.addNode(std::move(cpu));
    for (const auto& c : e.children) {
      if (c.name == "pci")
        addPci(c, id);
      else if (c.name == "nic")
        addNic(c, id, -1);
      else
        ignored(c);
    }
  }

  void addPci(const XmlElement& e, int parent) {
    checkAttrs(e, {"busid", "class", "vendor", "device", "subsystem_vendor", "subsystem_device", "link_speed",
                   "link_width", "vendor_id", "device_id"});
    int64_t busId = busIdAttr(e, "busid");
    const XmlElement* gpu = e.child("gpu");
    const XmlElement* nic = e.child("nic");
    int cls = -1;
    if (const std::string* text = e.attr("class"); text != nullptr && !parsePciClass(*text, &cls)) {
      CHORUS_LOG_INFO(kGraph, "topology file ", source_, ", line ", e.line, ": class \"", *text,
                      "\" is not a PCI class code; ignored");
      cls = -1;
    }
    const PciKind kind = pciKind(cls);
    long width = intAttr(e, "link_width", 0);
    if (width < 0 || width > kMaxPciWidth) fail(e, "link_width " + std::to_string(width) + " is out of range");
    int rate = 60;
    const std::string* speed = e.attr("link_speed");
    if (speed && !speed->empty() && !pciLaneRate(*speed, &rate)) {
      if (speed->find('-') != std::string::npos) fail(e, "link_speed \"" + *speed + "\" is negative");
      CHORUS_LOG_INFO(kGraph, "topology file ", source_, ", line ", e.line, ": link_speed \"", *speed,
                      "\" not understood, assuming 8 GT/s");
      rate = 60;
    }
    double bw = pciBw(static_cast<int>(width), rate);
    const int host = graph_.node(parent).host;
    if (gpu != nullptr) {
      int node = addGpu(*gpu, busId, parent);
      graph_.mutableNode(node).pciClass = cls;
      graph_.connectBoth(node, parent, LinkType::kPci, bw);
    } else if (nic != nullptr) {
      // The same NIC may be listed twice (its ports under two <pci> elements); any other node there is an error.
      int node = graph_.findByBusId(host, busId);
      if (node >= 0 && graph_.node(node).type != NodeType::kNic) fail(e, "PCI bus id appears twice");
      if (node < 0) {
        node = newNode(NodeType::kNic, parent, busId);
        graph_.mutableNode(node).pciClass = cls;
        graph_.connectBoth(node, parent, LinkType::kPci, bw);
      }
      addNic(*nic, -2, node);
    } else if (kind == PciKind::kBridge || kind == PciKind::kUnknown || e.child("pci") != nullptr) {
      if (graph_.findByBusId(host, busId) >= 0) fail(e, "PCI bus id appears twice");
      // Linked to its parent first, so that a node's first PCI link always leads up (Graph::parentSwitch).
      int node = newNode(NodeType::kPci, parent, busId);
      graph_.mutableNode(node).pciClass = cls;
      graph_.connectBoth(node, parent, LinkType::kPci, bw);
      for (const auto& c : e.children) {
        if (c.name == "pci")
          addPci(c, node);
        else if (c.name == "pcilink")
          pcilinks_.push_back({&c, node});
        else if (c.name == "nic")
          addNic(c, node, -1);
        else
          ignored(c);
      }
    } else {
      // A device listed by class code only, as in the files cloud providers ship: a GPU or NIC with no <gpu> or
      // <nic> child, an NVSwitch, storage. It stays in the graph as a PCI device of its class (never dropped), a
      // leaf under its switch; detection (topo_merge.h) or --assume (assume.h) describes GPUs and NICs.
      if (graph_.findByBusId(host, busId) >= 0) fail(e, "PCI bus id appears twice");
      int node = newNode(NodeType::kPci, parent, busId);
      graph_.mutableNode(node).pciClass = cls;
      graph_.connectBoth(node, parent, LinkType::kPci, bw);
      for (const auto& c : e.children) ignored(c);
      CHORUS_LOG_INFO(kGraph, "topology file ", source_, ", line ", e.line, ": PCI device ", formatBusId(busId), " (",
                      pciKindName(kind), ", class ", formatPciClass(cls), ") is listed by class code only");
    }
  }

  int newNode(NodeType type, int parent, int64_t busId) {
    Node n;
    n.type = type;
    n.host = graph_.node(parent).host;
    n.busId = busId;
    return graph_.addNode(std::move(n));
  }

  int addGpu(const XmlElement& e, int64_t busId, int parent) {
    checkAttrs(e, {"dev", "sm", "rank", "gdr", "mlopart"});
    int host = graph_.node(parent).host;
    if (graph_.findByBusId(host, busId) >= 0) fail(e, "GPU " + formatBusId(busId) + " appears twice");
    Node gpu;
    gpu.type = NodeType::kGpu;
    gpu.host = host;
    gpu.busId = busId;
    long dev = intAttr(e, "dev", 0, true);
    if (dev < 0 || dev > kMaxDev) fail(e, "dev " + std::to_string(dev) + " is out of range");
    if (graph_.findByIndex(NodeType::kGpu, host, static_cast<int>(dev)) >= 0)
      fail(e, "GPU dev " + std::to_string(dev) + " appears twice");
    gpu.index = static_cast<int>(dev);
    gpu.rank = static_cast<int>(intAttr(e, "rank", dev));
    long sm = intAttr(e, "sm", 0);
    if (sm < 0 || sm > 1000) fail(e, "sm " + std::to_string(sm) + " is out of range");
    gpu.sm = static_cast<int>(sm);
    gpu.gdr = static_cast<int>(intAttr(e, "gdr", 0));
    int id = graph_.addNode(std::move(gpu));
    for (const auto& c : e.children) {
      if (c.name == "nvlink")
        nvlinks_.push_back({&c, id});
      else if (c.name == "c2c")
        addC2c(c, id);
      else
        ignored(c);
    }
    return id;
  }

  void addC2c(const XmlElement& e, int gpu) {
    checkAttrs(e, {"bw", "count"});
    long bw = intAttr(e, "bw", 0, true);
    long count = intAttr(e, "count", 1);
    if (bw <= 0 || bw > kMaxC2cMBps) fail(e, "bw " + std::to_string(bw) + " is out of range");
    if (count <= 0 || count > kMaxNvlinkCount) fail(e, "count " + std::to_string(count) + " is out of range");
    c2c_.push_back({gpu, bw * count / 1000.0});
  }

  // nic is the NIC node when known (nic element under a pci element); otherwise a NIC node is made under cpu.
  void addNic(const XmlElement& e, int cpu, int nic) {
    checkAttrs(e, {});
    if (nic < 0) {
      nic = newNode(NodeType::kNic, cpu, -1);
      graph_.connectBoth(nic, cpu, LinkType::kPci, kLocBw);
    }
    for (const auto& c : e.children) {
      if (c.name != "net") {
        ignored(c);
        continue;
      }
      checkAttrs(c,
                 {"name", "dev", "speed", "port", "latency", "guid", "maxconn", "gdr", "coll", "rail", "plane", "net"});
      if (c.attr("dev") == nullptr) {
        CHORUS_LOG_INFO(kGraph, "topology file ", source_, ", line ", c.line, ": <net> without dev ignored");
        continue;
      }
      Node net;
      net.type = NodeType::kNet;
      net.host = graph_.node(nic).host;
      long dev = intAttr(c, "dev", 0, true);
      if (dev < 0 || dev > kMaxDev) fail(c, "dev " + std::to_string(dev) + " is out of range");
      if (graph_.findByIndex(NodeType::kNet, net.host, static_cast<int>(dev)) >= 0)
        fail(c, "net dev " + std::to_string(dev) + " appears twice");
      net.index = static_cast<int>(dev);
      long mbps = intAttr(c, "speed", 0);
      if (mbps < -1 || mbps > kMaxNetMbps) fail(c, "speed " + std::to_string(mbps) + " Mb/s is out of range");
      if (mbps <= 0) mbps = 10000;  // NCCL: some NICs report -1
      net.name = c.attr("name") ? *c.attr("name") : std::string();
      net.gdr = static_cast<int>(intAttr(c, "gdr", 0));
      net.busId = -1;
      int id = graph_.addNode(std::move(net));
      graph_.connectBoth(nic, id, LinkType::kNet, mbps / 8000.0);
    }
  }

  void addNvlink(const Pending& p) {
    const XmlElement& e = *p.element;
    checkAttrs(e, {"target", "count", "tclass"});
    long count = intAttr(e, "count", 1);
    if (count <= 0 || count > kMaxNvlinkCount) fail(e, "count " + std::to_string(count) + " is out of range");
    int64_t target = busIdAttr(e, "target");
    const Node& gpu = graph_.node(p.from);
    double bw = count * nvlinkBw(gpu.sm);
    std::string tclass = e.attr("tclass") ? *e.attr("tclass") : std::string();
    int remote = graph_.findByBusId(gpu.host, target);
    const bool remoteIsNvSwitch = remote >= 0 && pciKind(graph_.node(remote).pciClass) == PciKind::kNvSwitch;
    if (remote >= 0 && graph_.node(remote).type == NodeType::kGpu) {
      if (remote == p.from) fail(e, "NVLink from a GPU to itself");
      graph_.connect(p.from, remote, LinkType::kNvl, bw);
    } else if (tclass == "0x068000" || remoteIsNvSwitch) {
      // One NVS node per host: the NVSwitches of a host form one crossbar (NCCL's model); hosts' fabrics are
      // separate, so GPUs of different hosts meet only through their NICs.
      const int host = gpu.host;  // `gpu` refers into the node vector, which addNode may reallocate
      auto it = nvs_.find(host);
      if (it == nvs_.end()) {
        Node n;
        n.type = NodeType::kNvs;
        n.host = host;
        int nvs = graph_.addNode(std::move(n));
        it = nvs_.emplace(host, nvs).first;
      }
      graph_.connectBoth(p.from, it->second, LinkType::kNvl, bw);
    } else if (tclass == "0x068001") {
      int cpu = graph_.localCpu(p.from);
      if (cpu >= 0) graph_.connectBoth(p.from, cpu, LinkType::kNvl, bw);
    } else if (remote >= 0 && graph_.isClassOnlyDevice(remote)) {
      // The far GPU is listed by class only (this machine or --assume did not describe it): no NVLink to it.
      CHORUS_LOG_INFO(kGraph, "topology file ", source_, ", line ", e.line, ": NVLink to ", graph_.label(remote),
                      ", which is not described; ignored");
    } else {
      fail(e, "NVLink to unknown bus id " + formatBusId(target) + (tclass.empty() ? "" : " (class " + tclass + ")"));
    }
  }

  void addPcilink(const Pending& p) {
    int64_t target = busIdAttr(*p.element, "target");
    int remote = graph_.findByBusId(graph_.node(p.from).host, target);
    if (remote >= 0 && graph_.node(remote).type == NodeType::kPci)
      graph_.connect(p.from, remote, LinkType::kLoc, kLocBw);
  }

  void connectCpus() {
    for (const auto& [gpu, bw] : c2c_) {
      int cpu = graph_.localCpu(gpu);
      if (cpu >= 0) graph_.connectBoth(gpu, cpu, LinkType::kC2c, bw);
    }
    auto cpus = graph_.ofType(NodeType::kCpu);
    for (int a : cpus)
      for (int b : cpus)
        if (a != b && graph_.node(a).host == graph_.node(b).host)
          graph_.connect(a, b, LinkType::kSys, cpuInterconnectBw(graph_.node(a)));
  }

  std::string source_;
  Graph graph_;
  std::vector<Pending> nvlinks_;
  std::vector<Pending> pcilinks_;
  std::vector<std::pair<int, double>> c2c_;
  std::map<int, int> nvs_;  // host -> its NVS node
};

}  // namespace

Graph graphFromXml(const XmlElement& root, const std::string& source) {
  return Builder(source).build(root);
}

Graph loadTopoFile(const std::string& path) {
  return graphFromXml(readXmlFile(path), path);
}

}  // namespace chorus::topology
