// Properties over every fixture (the dump-style ones as they are, the class-code ones as they are and previewed with
// --assume), on one host and replicated over two and three hosts:
// - every device of the file appears in the graph (GPUs, NICs and their ports, devices listed by class code only);
// - every GPU pairs with one of its closest NICs, a NIC under its own switch where there is one, and GPUs sharing
//   a switch with as many NICs get different ones;
// - multi-node rings cross each host boundary once per channel, enter each host by the NIC of the first GPU there
//   and leave by the NIC of the last, and the channels spread over the NICs; no link carries more than it can.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>

#include "topo_test_util.h"
#include "topology/assume.h"
#include "topology/nic_affinity.h"
#include "topology/paths.h"
#include "topology/pci_class.h"
#include "topology/search.h"
#include "topology/topo_xml.h"

namespace chorus::topology {
namespace {

using testing::fixture;

struct Variant {
  const char* file;
  std::vector<const char*> assume;
  std::string name() const {
    std::string n = file;
    for (const char* a : assume) n += std::string(" ") + a;
    return n;
  }
};

const std::vector<Variant>& variants() {
  static const std::vector<Variant> kVariants = {
      {"dgx_a100.xml", {}},
      {"dgx_h100.xml", {}},
      {"pcie_2s_8gpu.xml", {}},
      {"nvlink_pairs_4gpu.xml", {}},
      {"cpu_2numa_nogpu.xml", {}},
      {"nvswitch_vm_8gpu_classonly.xml", {}},
      {"nvswitch_vm_8gpu_classonly.xml", {"gpu=a100-sxm4,nvswitch", "nic=ib-hdr200"}},
      {"nvswitch_vm_8gpu_classonly.xml", {"gpu=h100-sxm5,nvswitch", "nic=ib-ndr400"}},
      {"nvswitch_vm_8gpu_classonly.xml", {"gpu=v100-sxm2", "nic=ib-edr100"}},
      {"pcie_2s_8gpu_classonly.xml", {}},
      {"pcie_2s_8gpu_classonly.xml", {"gpu=v100-sxm2", "nic=ib-edr100", "nic=eth-100g"}},
      {"pcie_2s_8gpu_classonly.xml", {"gpu=v100-sxm2", "nic=ib-edr100"}},
      {"dgx_a100.xml", {"gpu=a100-sxm4,nvswitch", "nic=ib-hdr200"}},  // described: --assume changes nothing
      {"hyperv_vm_8gpu_classonly.xml", {}},
      {"hyperv_vm_8gpu_classonly.xml", {"gpu=h100-sxm5,nvswitch", "nic=ib-ndr400"}},
      {"hyperv_vm_8gpu_classonly.xml", {"gpu=h100-sxm5,nvswitch", "nic=eth-400g"}},
  };
  return kVariants;
}

XmlElement build(const Variant& v, int hosts) {
  XmlElement xml = readXmlFile(fixture(v.file));
  Assumptions a;
  for (const char* value : v.assume) parseAssumption(value, &a);
  if (!a.empty()) applyAssumptions(xml, a);
  return testing::replicate(xml, hosts);
}

int hostOf(const Graph& g, const XmlElement& cpu) {
  uint64_t hash = cpu.attr("host_hash") ? std::strtoull(cpu.attr("host_hash")->c_str(), nullptr, 16) : 0;
  for (size_t h = 0; h < g.hostHashes().size(); ++h)
    if (g.hostHashes()[h] == hash) return static_cast<int>(h);
  return -1;
}

// Every <pci> device and every <net> of the XML has its node.
void checkEveryDeviceAppears(const XmlElement& xml, const Graph& g, const std::string& what) {
  for (const auto& cpu : xml.children) {
    int host = hostOf(g, cpu);
    ASSERT_GE(host, 0) << what;
    std::function<void(const XmlElement&)> walk = [&](const XmlElement& e) {
      for (const auto& c : e.children) {
        if (c.name == "net") {
          int dev = std::atoi(c.attr("dev")->c_str());
          EXPECT_GE(g.findByIndex(NodeType::kNet, host, dev), 0) << what << ": net dev " << dev;
        }
        if (c.name == "nic") walk(c);
        if (c.name != "pci") continue;
        int64_t bus = -1;
        ASSERT_TRUE(parseBusId(*c.attr("busid"), &bus));
        int node = g.findByBusId(host, bus);
        ASSERT_GE(node, 0) << what << ": " << *c.attr("busid") << " is not in the graph";
        int cls = -1;
        if (c.attr("class")) parsePciClass(*c.attr("class"), &cls);
        if (c.child("gpu")) {
          EXPECT_EQ(g.node(node).type, NodeType::kGpu) << what << ": " << *c.attr("busid");
        } else if (c.child("nic")) {
          EXPECT_EQ(g.node(node).type, NodeType::kNic) << what << ": " << *c.attr("busid");
        } else if (c.child("pci") == nullptr && pciKind(cls) != PciKind::kBridge && cls >= 0) {
          EXPECT_TRUE(g.isClassOnlyDevice(node)) << what << ": " << *c.attr("busid");
          EXPECT_EQ(g.node(node).pciClass, cls) << what;
        }
        walk(c);
      }
    };
    walk(cpu);
  }
}

int nicOfNet(const Graph& g, int net) {
  return g.node(net).links.at(0).to;
}

void checkPairs(const Graph& g, const Paths& paths, const std::vector<GpuNic>& pairs, const std::string& what) {
  std::map<int, std::set<int>> netsUsedUnder, gpusUnder, netsUnder;
  for (int net : g.ofType(NodeType::kNet)) {
    int sw = g.parentSwitch(nicOfNet(g, net));
    if (sw >= 0) netsUnder[sw].insert(net);
  }
  for (const GpuNic& pair : pairs) {
    const Node& gpu = g.node(pair.gpu);
    PathType best = PathType::kDis;
    bool underSwitch = false;
    int sw = g.parentSwitch(pair.gpu);
    for (int net : g.ofType(NodeType::kNet)) {
      if (g.node(net).host != gpu.host) continue;
      best = std::min(best, paths.get(pair.gpu, net).type);
      underSwitch = underSwitch || (sw >= 0 && g.parentSwitch(nicOfNet(g, net)) == sw);
    }
    if (best == PathType::kDis) {
      EXPECT_EQ(pair.net, -1) << what;
      continue;
    }
    ASSERT_GE(pair.net, 0) << what << ": " << g.label(pair.gpu) << " has no NIC";
    EXPECT_EQ(g.node(pair.net).host, gpu.host) << what;
    EXPECT_EQ(pair.type, best) << what << ": " << g.label(pair.gpu);
    if (underSwitch) {
      EXPECT_EQ(g.parentSwitch(nicOfNet(g, pair.net)), sw)
          << what << ": " << g.label(pair.gpu) << " pairs with " << g.label(pair.net) << " outside its switch";
      netsUsedUnder[sw].insert(pair.net);
      gpusUnder[sw].insert(pair.gpu);
    }
  }
  for (const auto& [sw, gpus] : gpusUnder)
    EXPECT_EQ(netsUsedUnder[sw].size(), std::min(gpus.size(), netsUnder[sw].size())) << what << ": " << g.label(sw);
}

// Multi-node rings: each host's GPUs are one contiguous segment entered and left through the NICs of its first and
// last GPU; channels spread over the NICs; links within capacity.
void checkMultiNodeRings(const Graph& g, const SearchResult& r, int hosts, const std::string& what) {
  ASSERT_TRUE(r.stitched) << what;
  ASSERT_FALSE(r.rings.empty()) << what;
  std::map<int, std::vector<int>> closestOf;
  for (const GpuNic& p : r.gpuNics) closestOf[p.gpu] = p.closest;
  auto closeTo = [&](int gpu, int net) {
    return std::find(closestOf[gpu].begin(), closestOf[gpu].end(), net) != closestOf[gpu].end();
  };
  const int n = static_cast<int>(r.gpus.size());
  Paths paths(g);
  PathType worstEndPath = PathType::kLoc;
  std::map<int, std::set<int>> entries;  // host -> NETs channels enter by
  std::map<std::pair<int, int>, double> load;
  for (const auto& ring : r.rings) {
    ASSERT_EQ(static_cast<int>(ring.order.size()), n) << what;
    std::set<int> seen(ring.order.begin(), ring.order.end());
    EXPECT_EQ(static_cast<int>(seen.size()), n) << what;
    ASSERT_EQ(static_cast<int>(ring.nets.size()), hosts) << what;
    int crossings = 0;
    size_t segment = 0;
    for (int i = 0; i < n; ++i) {
      int here = r.gpus[ring.order[i]];
      int prev = r.gpus[ring.order[(i + n - 1) % n]];
      int next = r.gpus[ring.order[(i + 1) % n]];
      bool first = hosts == 1 ? i == 0 : g.node(prev).host != g.node(here).host;
      bool last = hosts == 1 ? i == n - 1 : g.node(next).host != g.node(here).host;
      crossings += hosts > 1 && last;
      if (first) {
        ASSERT_LT(segment, ring.nets.size()) << what;
        EXPECT_TRUE(closeTo(here, ring.nets[segment].first))
            << what << ": enters by a NIC not closest to " << g.label(here);
        entries[g.node(here).host].insert(ring.nets[segment].first);
        worstEndPath = std::max(worstEndPath, paths.get(here, ring.nets[segment].first).type);
      }
      if (last) {
        worstEndPath = std::max(worstEndPath, paths.get(here, ring.nets[segment].second).type);
        EXPECT_TRUE(closeTo(here, ring.nets[segment].second))
            << what << ": leaves by a NIC not closest to " << g.label(here);
        ++segment;
      }
    }
    if (hosts > 1) {
      EXPECT_EQ(crossings, hosts) << what << ": a ring crosses host boundaries more than once";
    }
    EXPECT_GT(ring.bw, 0) << what;
    for (const Hop& h : ring.hops) load[{h.from, h.link}] += ring.bw;
  }
  for (const auto& [key, bw] : load)
    EXPECT_LE(bw, g.node(key.first).links[key.second].bw * (1 + 1e-6)) << what << ": " << g.label(key.first);
  // typeInter is NCCL's: the worst path between a chain's end GPUs and their NICs, a type NCCL's graph files
  // can name (LOC .. SYS).
  EXPECT_EQ(r.typeInter, worstEndPath) << what << ": typeInter " << pathTypeName(r.typeInter);
  EXPECT_LE(r.typeInter, PathType::kSys) << what;
  for (const auto& [host, nets] : entries) {
    std::set<int> paired;  // every NIC some GPU of the host is closest to
    for (const GpuNic& p : r.gpuNics)
      if (g.node(p.gpu).host == host) paired.insert(p.closest.begin(), p.closest.end());
    EXPECT_EQ(nets.size(), std::min(paired.size(), r.rings.size())) << what << ": channels do not spread over NICs";
  }
}

TEST(TopoProps, EveryDeviceOfEveryFixtureAppears) {
  for (const Variant& v : variants()) {
    for (int hosts : {1, 2, 3}) {
      XmlElement xml = build(v, hosts);
      Graph g = graphFromXml(xml, v.name());
      checkEveryDeviceAppears(xml, g, v.name() + " x" + std::to_string(hosts));
    }
  }
}

TEST(TopoProps, EveryGpuPairsWithAClosestNic) {
  for (const Variant& v : variants()) {
    for (int hosts : {1, 2}) {
      Graph g = graphFromXml(build(v, hosts), v.name());
      Paths paths(g);
      auto pairs = gpuNicAffinity(g, paths);
      EXPECT_EQ(pairs.size(), g.ofType(NodeType::kGpu).size());
      checkPairs(g, paths, pairs, v.name() + " x" + std::to_string(hosts));
    }
  }
}

TEST(TopoProps, MultiNodeRingsCrossHostsOncePerChannel) {
  int checked = 0;
  for (const Variant& v : variants()) {
    for (int hosts : {1, 2, 3}) {
      Graph g = graphFromXml(build(v, hosts), v.name());
      if (g.ofType(NodeType::kGpu).empty() || g.ofType(NodeType::kNet).empty()) continue;
      Paths paths(g);
      SearchOptions options;
      options.viaNets = true;  // one host: as each host of a multi-node job; several: always through the NICs
      SearchResult r = searchChannels(g, paths, options);
      checkMultiNodeRings(g, r, hosts, v.name() + " x" + std::to_string(hosts));
      if (hosts > 1) {
        // Without viaNets, hosts that share no path are stitched all the same.
        SearchResult plain = searchChannels(g, paths);
        EXPECT_TRUE(plain.stitched) << v.name();
        checkMultiNodeRings(g, plain, hosts, v.name() + " x" + std::to_string(hosts) + " (plain)");
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 24);
}

TEST(TopoProps, MoreNicsThanGpusSpreadsChannelsOverEveryNic) {
  // Four HCAs and two GPUs per switch (as some bare-metal offers have): the GPUs pair with two of them, and the
  // multi-node channels enter and leave by all four.
  XmlElement xml = readXmlFile(fixture("nvswitch_vm_8gpu_classonly.xml"));
  for (auto& cpu : xml.children) {
    XmlElement& sw = cpu.children.at(0);
    int64_t base = 0;
    parseBusId(*sw.attr("busid"), &base);
    for (int k : {7, 8}) {
      XmlElement& hca = sw.add("pci");
      hca.set("busid", formatBusId(base + (k << 12)));
      hca.set("class", "0x020700");
      hca.set("link_speed", "16.0 GT/s PCIe");
      hca.set("link_width", "16");
    }
  }
  Assumptions a;
  parseAssumption("gpu=a100-sxm4,nvswitch", &a);
  parseAssumption("nic=ib-hdr200", &a);
  applyAssumptions(xml, a);
  for (int hosts : {1, 2}) {
    Graph g = graphFromXml(testing::replicate(xml, hosts), "four nics per switch");
    ASSERT_EQ(g.ofType(NodeType::kNet).size(), 16u * hosts);
    Paths paths(g);
    auto pairs = gpuNicAffinity(g, paths);
    checkPairs(g, paths, pairs, "four nics per switch");
    for (const GpuNic& p : pairs) EXPECT_EQ(p.closest.size(), 4u);
    SearchOptions options;
    options.viaNets = true;
    SearchResult r = searchChannels(g, paths, options);
    checkMultiNodeRings(g, r, hosts, "four nics per switch x" + std::to_string(hosts));
    std::set<int> used;
    for (const auto& ring : r.rings)
      for (const auto& [in, out] : ring.nets) {
        used.insert(in);
        used.insert(out);
      }
    EXPECT_EQ(used.size(), 16u * hosts);
  }
}

}  // namespace
}  // namespace chorus::topology
