#include "topology/topo_merge.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>

#include "topology/graph.h"
#include "topology/pci_class.h"

namespace chorus::topology {
namespace {

XmlElement* mutableChild(XmlElement& e, const std::string& name) {
  for (auto& c : e.children)
    if (c.name == name) return &c;
  return nullptr;
}

int64_t busOf(const XmlElement& e) {
  const std::string* b = e.attr("busid");
  int64_t id = -1;
  return b != nullptr && parseBusId(*b, &id) ? id : -1;
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

XmlElement shallowCopy(const XmlElement& e) {
  XmlElement c;
  c.name = e.name;
  c.attrs = e.attrs;
  return c;
}

void eraseAttr(XmlElement& e, const std::string& key) {
  e.attrs.erase(std::remove_if(e.attrs.begin(), e.attrs.end(), [&](const auto& kv) { return kv.first == key; }),
                e.attrs.end());
}

// Which of the file's CPUs are this machine's.
class Locality {
 public:
  Locality(const XmlElement& file, uint64_t hash, MergeReport* report) : hash_(hash) {
    bool any = false, haveFirst = false;
    for (const auto& c : file.children) {
      if (c.name != "cpu") continue;
      const std::string* h = c.attr("host_hash");
      if (h == nullptr || parse(*h) == hash) any = true;
      if (h != nullptr && !haveFirst) {
        first_ = parse(*h);
        haveFirst = true;
      }
    }
    if (!any && haveFirst) {
      useFirst_ = true;
      report->notes.push_back("the file names no CPU of this host (host_hash " + hex(hash) + "); its first host (" +
                              hex(first_) + ") is taken as this machine");
    }
  }
  bool local(const XmlElement& cpu) const {
    if (cpu.name != "cpu") return false;
    const std::string* h = cpu.attr("host_hash");
    if (h == nullptr) return true;
    return parse(*h) == (useFirst_ ? first_ : hash_);
  }

 private:
  static uint64_t parse(const std::string& h) { return std::strtoull(h.c_str(), nullptr, 16); }
  uint64_t hash_;
  uint64_t first_ = 0;
  bool useFirst_ = false;
};

XmlElement* findPciUnder(XmlElement& e, int64_t bus) {
  for (auto& c : e.children) {
    if (c.name != "pci") continue;
    if (busOf(c) == bus) return &c;
    if (XmlElement* found = findPciUnder(c, bus)) return found;
  }
  return nullptr;
}

XmlElement* findLocalPci(XmlElement& file, const Locality& loc, int64_t bus) {
  if (bus < 0) return nullptr;
  for (auto& cpu : file.children)
    if (loc.local(cpu))
      if (XmlElement* found = findPciUnder(cpu, bus)) return found;
  return nullptr;
}

int numaOf(const XmlElement& cpu) {
  const std::string* n = cpu.attr("numaid");
  return n == nullptr ? 0 : std::atoi(n->c_str());
}

XmlElement* findLocalCpu(XmlElement& file, const Locality& loc, int numa) {
  for (auto& cpu : file.children)
    if (loc.local(cpu) && numaOf(cpu) == numa) return &cpu;
  return nullptr;
}

// Calls f on every <pci> element under the file's local CPUs, parents before children.
void forEachLocalPci(XmlElement& file, const Locality& loc, const std::function<void(XmlElement&)>& f) {
  std::function<void(XmlElement&)> walk = [&](XmlElement& e) {
    for (auto& c : e.children) {
      if (c.name != "pci") continue;
      f(c);
      walk(c);
    }
  };
  for (auto& cpu : file.children)
    if (loc.local(cpu)) walk(cpu);
}

// A device detection found: a <pci> element with a <gpu> or <nic> child, and the chain of <pci> elements from
// its CPU down to it.
struct Found {
  const XmlElement* cpu;
  std::vector<const XmlElement*> chain;
  int64_t bus;
  bool gpu;
};

void collect(const XmlElement& e, const XmlElement* cpu, std::vector<const XmlElement*>& chain,
             std::vector<Found>& out) {
  for (const auto& c : e.children) {
    if (c.name != "pci") continue;
    chain.push_back(&c);
    int64_t bus = busOf(c);
    if (bus >= 0 && (c.child("gpu") != nullptr || c.child("nic") != nullptr))
      out.push_back({cpu, chain, bus, c.child("gpu") != nullptr});
    collect(c, cpu, chain, out);
    chain.pop_back();
  }
}

// chain[from..] as nested elements: the bridges without their other children, the device whole.
XmlElement nestChain(const std::vector<const XmlElement*>& chain, size_t from) {
  XmlElement out = *chain.back();
  for (size_t i = chain.size() - 1; i-- > from;) {
    XmlElement up = shallowCopy(*chain[i]);
    up.children.push_back(std::move(out));
    out = std::move(up);
  }
  return out;
}

// Adds a device the file does not list where detection places it; returns where.
std::string insertFound(XmlElement& file, const Locality& loc, const Found& d) {
  for (size_t k = d.chain.size() - 1; k-- > 0;) {
    int64_t b = busOf(*d.chain[k]);
    if (XmlElement* anc = findLocalPci(file, loc, b)) {
      anc->children.push_back(nestChain(d.chain, k + 1));
      return "added under switch " + formatBusId(b);
    }
  }
  int numa = numaOf(*d.cpu);
  XmlElement* cpu = findLocalCpu(file, loc, numa);
  std::string where = "added under CPU " + std::to_string(numa);
  if (cpu == nullptr) {
    XmlElement c = shallowCopy(*d.cpu);
    // The new CPU must count as the same host as the file's CPUs of this machine.
    const XmlElement* sibling = nullptr;
    for (const auto& e : file.children)
      if (loc.local(e)) sibling = &e;
    if (sibling != nullptr) {
      if (const std::string* h = sibling->attr("host_hash"))
        c.set("host_hash", *h);
      else
        eraseAttr(c, "host_hash");
    }
    file.children.push_back(std::move(c));
    cpu = &file.children.back();
    where = "added under a new CPU " + std::to_string(numa) + " (the file has no such NUMA node)";
  }
  cpu->children.push_back(nestChain(d.chain, 0));
  return where;
}

std::string describeGpu(const XmlElement& gpu) {
  long links = 0;
  int gpuPeers = 0;
  bool nvswitch = false;
  for (const auto& c : gpu.children) {
    if (c.name != "nvlink") continue;
    const std::string* count = c.attr("count");
    links += count != nullptr ? std::atol(count->c_str()) : 1;
    const std::string* tclass = c.attr("tclass");
    if (tclass != nullptr && *tclass == "0x068000")
      nvswitch = true;
    else
      ++gpuPeers;
  }
  std::string s = "dev " + (gpu.attr("dev") ? *gpu.attr("dev") : std::string("?")) + ", sm " +
                  (gpu.attr("sm") ? *gpu.attr("sm") : std::string("?"));
  if (links > 0) {
    s += ", " + std::to_string(links) + " NVLink(s) to ";
    s += nvswitch ? std::string("NVSwitch") : std::to_string(gpuPeers) + " GPU(s)";
    if (nvswitch && gpuPeers > 0) s += " and " + std::to_string(gpuPeers) + " GPU(s)";
  }
  return s;
}

std::string describeNic(const XmlElement& nic) {
  std::string ports;
  int n = 0;
  for (const auto& c : nic.children) {
    if (c.name != "net") continue;
    ++n;
    long mbps = c.attr("speed") ? std::atol(c.attr("speed")->c_str()) : 0;
    ports += std::string(ports.empty() ? "" : ", ") + (c.attr("name") ? *c.attr("name") : std::string("?")) + " " +
             std::to_string(mbps / 1000) + " Gb/s";
  }
  return std::to_string(n) + " port(s): " + ports;
}

// A port's identity: its device name and port number (a dual-port HCA lists two <net name="mlx5_0">).
std::string portKey(const XmlElement& net) {
  const std::string* name = net.attr("name");
  const std::string* port = net.attr("port");
  return (name ? *name : std::string("?")) + ":" + (port ? *port : std::string("1"));
}

// Merges detected ports into the file's <nic>: ports matched by name and port number, dev from detection.
void mergeNets(XmlElement& fileNic, const XmlElement& detNic, std::vector<std::string>* dropped) {
  std::vector<XmlElement> kept;
  std::vector<bool> matched(fileNic.children.size(), false);
  for (const auto& d : detNic.children) {
    if (d.name != "net") continue;
    int match = -1;
    for (size_t i = 0; i < fileNic.children.size() && match < 0; ++i) {
      const auto& f = fileNic.children[i];
      if (f.name == "net" && !matched[i] && portKey(f) == portKey(d)) match = static_cast<int>(i);
    }
    if (match < 0) {
      kept.push_back(d);
      continue;
    }
    matched[match] = true;
    XmlElement m = fileNic.children[match];
    if (const std::string* dev = d.attr("dev")) m.set("dev", *dev);
    detail::fillMissingAttrs(m, d);
    kept.push_back(std::move(m));
  }
  std::vector<XmlElement> others;
  for (size_t i = 0; i < fileNic.children.size(); ++i) {
    const auto& f = fileNic.children[i];
    if (f.name != "net")
      others.push_back(f);
    else if (!matched[i])
      dropped->push_back(portKey(f));
  }
  others.insert(others.end(), kept.begin(), kept.end());
  fileNic.children = std::move(others);
}

// Network interfaces without a PCI device (<nic> straight under <cpu>): matched by name.
void mergeVirtualNics(XmlElement& file, const Locality& loc, const XmlElement& detected, MergeReport& r) {
  std::set<std::string> names;
  for (const auto& dc : detected.children) {
    if (dc.name != "cpu") continue;
    for (const auto& dn : dc.children) {
      if (dn.name != "nic") continue;
      for (const auto& net : dn.children) {
        if (net.name != "net" || net.attr("name") == nullptr) continue;
        const std::string& name = *net.attr("name");
        names.insert(name);
        XmlElement* match = nullptr;
        for (auto& cpu : file.children) {
          if (!loc.local(cpu)) continue;
          for (auto& nic : cpu.children) {
            if (nic.name != "nic") continue;
            for (auto& fnet : nic.children)
              if (fnet.name == "net" && fnet.attr("name") && *fnet.attr("name") == name) match = &fnet;
          }
        }
        if (match != nullptr) {
          if (const std::string* dev = net.attr("dev")) match->set("dev", *dev);
          detail::fillMissingAttrs(*match, net);
          r.notes.push_back("interface " + name + " (no PCI device): described by detection");
          continue;
        }
        XmlElement* cpu = findLocalCpu(file, loc, numaOf(dc));
        if (cpu == nullptr)
          for (auto& c : file.children)
            if (cpu == nullptr && loc.local(c)) cpu = &c;
        if (cpu == nullptr) continue;
        XmlElement& nic = cpu->add("nic");
        nic.children.push_back(net);
        r.notes.push_back("interface " + name + " (no PCI device) is not in the file: added under CPU " +
                          std::to_string(numaOf(*cpu)));
      }
    }
  }
  for (auto& cpu : file.children) {
    if (!loc.local(cpu)) continue;
    for (auto& nic : cpu.children) {
      if (nic.name != "nic") continue;
      auto& nets = nic.children;
      for (auto it = nets.begin(); it != nets.end();) {
        if (it->name == "net" && (it->attr("name") == nullptr || names.count(*it->attr("name")) == 0)) {
          r.missing.push_back({"NIC", "",
                               "interface " + (it->attr("name") ? *it->attr("name") : std::string("?")) +
                                   " (no PCI device) is not on this machine; removed"});
          it = nets.erase(it);
        } else {
          ++it;
        }
      }
    }
    cpu.children.erase(std::remove_if(cpu.children.begin(), cpu.children.end(),
                                      [](const XmlElement& e) { return e.name == "nic" && e.children.empty(); }),
                       cpu.children.end());
  }
}

}  // namespace

namespace detail {

void fillMissingAttrs(XmlElement& to, const XmlElement& from, std::initializer_list<const char*> skip) {
  for (const auto& kv : from.attrs) {
    if (std::any_of(skip.begin(), skip.end(), [&](const char* s) { return kv.first == s; })) continue;
    if (to.attr(kv.first) == nullptr) to.set(kv.first, kv.second);
  }
}

// Gives the file's device element the attributes it lacks and returns its `name` child (<gpu>, <nic>); when the
// file has none, the detected one is copied in and *copied is set.
static XmlElement& deviceChild(XmlElement& pci, const XmlElement& det, const char* name, bool* copied) {
  fillMissingAttrs(pci, det, {"busid"});
  XmlElement* own = mutableChild(pci, name);
  *copied = own == nullptr;
  if (own != nullptr) return *own;
  pci.children.push_back(*det.child(name));
  return pci.children.back();
}

std::string fillGpu(XmlElement& pci, const XmlElement& det) {
  bool copied = false;
  XmlElement& fg = deviceChild(pci, det, "gpu", &copied);
  if (copied) return describeGpu(fg);
  // The machine numbers its GPUs; the file's other attributes and NVLinks win where it has them (NCCL keeps a
  // file's values and fills only what is missing).
  const XmlElement* dg = det.child("gpu");
  for (const char* key : {"dev", "rank"})
    if (const std::string* v = dg->attr(key)) fg.set(key, *v);
  fillMissingAttrs(fg, *dg);
  bool hasLinks = std::any_of(fg.children.begin(), fg.children.end(),
                              [](const XmlElement& c) { return c.name == "nvlink" || c.name == "c2c"; });
  if (!hasLinks)
    for (const auto& c : dg->children) fg.children.push_back(c);
  return describeGpu(fg);
}

std::string fillNic(XmlElement& pci, const XmlElement& det, std::vector<std::string>* dropped) {
  bool copied = false;
  XmlElement& fn = deviceChild(pci, det, "nic", &copied);
  if (!copied) mergeNets(fn, *det.child("nic"), dropped);
  return describeNic(fn);
}

std::string deviceKindName(const XmlElement& pci) {
  int cls = -1;
  const std::string* c = pci.attr("class");
  PciKind k = c != nullptr && parsePciClass(*c, &cls) ? pciKind(cls) : PciKind::kUnknown;
  if (pci.child("gpu") != nullptr) return pciKindName(PciKind::kGpu);
  if (pci.child("nic") != nullptr) return pciKindName(isNicKind(k) ? k : PciKind::kNic);
  return pciKindName(k);
}

}  // namespace detail

std::vector<std::string> MergeReport::describe() const {
  std::vector<std::string> out;
  auto line = [](const MergeEntry& e, const std::string& what) {
    return e.kind + (e.busId.empty() ? "" : " " + e.busId) + ": " + what + e.detail;
  };
  for (const auto& e : filled) out.push_back(line(e, "described by detection: "));
  for (const auto& e : added) out.push_back(line(e, "detected but not in the file: "));
  for (const auto& e : missing) out.push_back(line(e, "not on this machine: "));
  out.insert(out.end(), notes.begin(), notes.end());
  return out;
}

MergeReport mergeDetected(XmlElement& file, const XmlElement& detected, uint64_t localHostHash) {
  MergeReport r;
  Locality loc(file, localHostHash, &r);
  for (const auto& dc : detected.children)
    if (dc.name == "cpu")
      if (XmlElement* fc = findLocalCpu(file, loc, numaOf(dc))) detail::fillMissingAttrs(*fc, dc, {"host_hash"});

  std::vector<Found> found;
  for (const auto& dc : detected.children) {
    if (dc.name != "cpu") continue;
    std::vector<const XmlElement*> chain;
    collect(dc, &dc, chain, found);
  }
  std::set<int64_t> foundGpus, foundNics;
  for (const Found& d : found) {
    (d.gpu ? foundGpus : foundNics).insert(d.bus);
    const XmlElement& det = *d.chain.back();
    std::string kind = detail::deviceKindName(det);
    std::string bus = formatBusId(d.bus);
    XmlElement* fp = findLocalPci(file, loc, d.bus);
    if (fp == nullptr) {
      std::string where = insertFound(file, loc, d);
      std::string what = d.gpu ? describeGpu(*det.child("gpu")) : describeNic(*det.child("nic"));
      r.added.push_back({kind, bus, where + " (" + what + ")"});
      continue;
    }
    if (d.gpu) {
      r.filled.push_back({kind, bus, detail::fillGpu(*fp, det)});
    } else {
      std::vector<std::string> dropped;
      r.filled.push_back({kind, bus, detail::fillNic(*fp, det, &dropped)});
      for (const auto& port : dropped)
        r.missing.push_back({kind, bus, "port " + port + " is in the file but not active here; removed"});
    }
  }
  mergeVirtualNics(file, loc, detected, r);

  // The file's GPUs and NICs that detection did not find stay as PCI devices of their class.
  std::vector<int64_t> strip;
  forEachLocalPci(file, loc, [&](XmlElement& e) {
    if (e.child("pci") != nullptr) return;  // a switch
    int cls = -1;
    const std::string* c = e.attr("class");
    PciKind kind = c != nullptr && parsePciClass(*c, &cls) ? pciKind(cls) : PciKind::kUnknown;
    bool gpu = e.child("gpu") != nullptr || (kind == PciKind::kGpu && e.child("nic") == nullptr);
    bool nic = !gpu && (e.child("nic") != nullptr || isNicKind(kind));
    int64_t bus = busOf(e);
    if (bus < 0) return;  // a malformed bus id: the graph builder reports it
    if ((gpu && foundGpus.count(bus)) || (nic && foundNics.count(bus)) || (!gpu && !nic)) return;
    bool described = e.child("gpu") != nullptr || e.child("nic") != nullptr;
    r.missing.push_back({detail::deviceKindName(e), formatBusId(bus),
                         described ? "described by the file, not detected here; kept as a PCI device of its class"
                                   : "listed by class code, not detected here; kept as a PCI device of its class"});
    if (described) strip.push_back(bus);
  });
  for (int64_t bus : strip) {
    XmlElement* e = findLocalPci(file, loc, bus);
    if (e == nullptr) continue;
    bool gpu = e->child("gpu") != nullptr;
    if (e->attr("class") == nullptr) e->set("class", gpu ? "0x030200" : "0x020000");
    e->children.erase(std::remove_if(e->children.begin(), e->children.end(),
                                     [](const XmlElement& c) { return c.name == "gpu" || c.name == "nic"; }),
                      e->children.end());
  }
  return r;
}

}  // namespace chorus::topology
