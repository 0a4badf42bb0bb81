// Helpers shared by the topology tests: fixture paths, a fake detector (the XML detection would write for a
// machine, built from data), fixtures replicated over several hosts.
#pragma once

#include <string>
#include <vector>

#include "topology/system.h"
#include "topology/xml_tree.h"

namespace chorus::topology::testing {

inline std::string fixture(const std::string& name) {
  std::string here = __FILE__;
  return here.substr(0, here.rfind("/unit/")) + "/fixtures/" + name;
}

// What detection would write for a machine (detect.h's format): CPUs by NUMA node, each device with the chain of
// bridges sysfs shows above it.
class FakeMachine {
 public:
  FakeMachine() {
    xml_.name = "system";
    xml_.set("version", "1");
  }
  XmlElement& cpu(int numa) {
    for (auto& c : xml_.children)
      if (*c.attr("numaid") == std::to_string(numa)) return c;
    XmlElement& c = xml_.add("cpu");
    c.set("numaid", std::to_string(numa));
    c.set("arch", "x86_64");
    c.set("vendor", "AuthenticAMD");
    return c;
  }
  // A GPU at `bus` with `links` NVLinks to an NVSwitch (none when 0), under the bridges of `chain` (top first).
  void gpu(const std::string& bus, int dev, int sm, int links, int numa = 0,
           const std::vector<std::string>& chain = {}) {
    XmlElement& g = device(bus, "0x030200", numa, chain).add("gpu");
    g.set("dev", std::to_string(dev));
    g.set("sm", std::to_string(sm));
    g.set("rank", std::to_string(dev));
    g.set("gdr", "1");
    if (links > 0) {
      XmlElement& l = g.add("nvlink");
      l.set("target", "0000:ff:00.0");
      l.set("count", std::to_string(links));
      l.set("tclass", "0x068000");
    }
  }
  // A NIC port (one <net>) at `bus`; a second call with the same bus adds a port.
  void nic(const std::string& bus, const std::string& name, int dev, long mbps, int port = 1, int numa = 0,
           const std::vector<std::string>& chain = {}) {
    XmlElement& pci = device(bus, "0x020700", numa, chain);
    XmlElement* nicEl = nullptr;
    for (auto& c : pci.children)
      if (c.name == "nic") nicEl = &c;
    if (nicEl == nullptr) nicEl = &pci.add("nic");
    XmlElement& n = nicEl->add("net");
    n.set("name", name);
    n.set("dev", std::to_string(dev));
    n.set("speed", std::to_string(mbps));
    n.set("port", std::to_string(port));
    n.set("gdr", "1");
  }
  // An interface without a PCI device (virtual), under the CPU of NUMA node `numa`.
  void virtualNic(const std::string& name, int dev, int numa = 0) {
    XmlElement& n = cpu(numa).add("nic").add("net");
    n.set("name", name);
    n.set("dev", std::to_string(dev));
    n.set("speed", "10000");
  }
  const XmlElement& xml() const { return xml_; }
  Detector detector() const {
    XmlElement x = xml_;
    return [x] { return x; };
  }

 private:
  XmlElement& device(const std::string& bus, const char* cls, int numa, const std::vector<std::string>& chain) {
    XmlElement* parent = &cpu(numa);
    std::vector<std::string> all = chain;
    all.push_back(bus);
    for (size_t i = 0; i < all.size(); ++i) {
      XmlElement* found = nullptr;
      for (auto& c : parent->children)
        if (c.name == "pci" && *c.attr("busid") == all[i]) found = &c;
      if (found == nullptr) {
        found = &parent->add("pci");
        found->set("busid", all[i]);
        found->set("class", i + 1 == all.size() ? cls : "0x060400");
      }
      parent = found;
    }
    return *parent;
  }
  XmlElement xml_;
};

// `one` (a <system> of one host) repeated on `hosts` hosts told apart by host_hash 0x1, 0x2, ...
inline XmlElement replicate(const XmlElement& one, int hosts) {
  if (hosts <= 1) return one;
  XmlElement all = one;
  all.children.clear();
  for (int h = 1; h <= hosts; ++h) {
    for (XmlElement cpu : one.children) {
      cpu.set("host_hash", "0x" + std::to_string(h));
      all.children.push_back(std::move(cpu));
    }
  }
  return all;
}

}  // namespace chorus::topology::testing
