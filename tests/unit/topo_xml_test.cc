// NCCL topology XML in and out: fixtures load, round-trip to the same graph, and bad files are errors that name
// the file, the line and the element.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "base/error.h"
#include "topology/paths.h"
#include "topology/pci_class.h"
#include "topology/search.h"
#include "topology/system.h"
#include "topology/topo_xml.h"

namespace chorus::topology {
namespace {

std::string fixture(const std::string& name) {
  std::string here = __FILE__;
  return here.substr(0, here.rfind("/unit/")) + "/fixtures/" + name;
}

const char* const kFixtures[] = {"dgx_a100.xml",
                                 "dgx_h100.xml",
                                 "pcie_2s_8gpu.xml",
                                 "nvlink_pairs_4gpu.xml",
                                 "cpu_2numa_nogpu.xml",
                                 "nvswitch_vm_8gpu_classonly.xml",
                                 "pcie_2s_8gpu_classonly.xml",
                                 "hyperv_vm_8gpu_classonly.xml"};

TEST(TopoXml, FixturesRoundTripToTheSameGraph) {
  for (const char* name : kFixtures) {
    XmlElement xml = readXmlFile(fixture(name));
    Graph first = graphFromXml(xml, name);
    std::string written = writeXml(xml);
    Graph second = graphFromXml(parseXml(written, "written"), "written");
    EXPECT_EQ(first.canonical(), second.canonical()) << name;
    EXPECT_EQ(writeXml(parseXml(written, "again")), written) << name;
  }
}

// A Hyper-V guest's file: bus ids with PCI domains under a made-up switch id, and a virtual function with an empty
// link speed and width 0, which NCCL reads as x16 at its fallback speed (Gen3): 16 x 8 GT/s / 80 = 12 GB/s (the
// device is not dropped, and its link does not become 0).
TEST(TopoXml, DomainBusIdsAndAnUnknownLinkReadAsNcclReadsThem) {
  Graph g = loadTopoFile(fixture("hyperv_vm_8gpu_classonly.xml"));
  int64_t bus = -1;
  ASSERT_TRUE(parseBusId("2a4c:00:02.0", &bus));
  const int vf = g.findByBusId(0, bus);
  ASSERT_GE(vf, 0);
  EXPECT_TRUE(g.isClassOnlyDevice(vf));
  int pciLinks = 0;
  for (const Link& l : g.node(vf).links) {
    if (l.type != LinkType::kPci) continue;
    ++pciLinks;
    EXPECT_DOUBLE_EQ(l.bw, 12.0);
  }
  EXPECT_EQ(pciLinks, 1);
  int classOnly = 0;
  for (const char* id : {"0001:00:00.0", "0008:00:00.0", "0101:00:00.0", "0108:00:00.0", "a0b1:00:00.0"}) {
    ASSERT_TRUE(parseBusId(id, &bus)) << id;
    const int node = g.findByBusId(0, bus);
    ASSERT_GE(node, 0) << id;
    classOnly += g.isClassOnlyDevice(node) ? 1 : 0;
    // GPUs and HCAs sit under their switch, the NVMe disk straight under its CPU.
    EXPECT_EQ(g.parentSwitch(node) >= 0, std::string(id) != "a0b1:00:00.0") << id;
  }
  EXPECT_EQ(classOnly, 5);
}

TEST(TopoXml, FixturesHaveTheirPublishedShape) {
  Graph a100 = loadTopoFile(fixture("dgx_a100.xml"));
  EXPECT_EQ(a100.ofType(NodeType::kGpu).size(), 8u);
  EXPECT_EQ(a100.ofType(NodeType::kNet).size(), 8u);
  EXPECT_EQ(a100.ofType(NodeType::kNvs).size(), 1u);  // six NVSwitches are one NVS node, as in NCCL
  int gpu = a100.ofType(NodeType::kGpu)[0];
  for (const Link& l : a100.node(gpu).links) {
    if (l.type == LinkType::kNvl) {
      EXPECT_DOUBLE_EQ(l.bw, 12 * 20.0);
    }
  }
  Graph h100 = loadTopoFile(fixture("dgx_h100.xml"));
  gpu = h100.ofType(NodeType::kGpu)[0];
  for (const Link& l : h100.node(gpu).links) {
    if (l.type == LinkType::kNvl) {
      EXPECT_NEAR(l.bw, 18 * 20.6, 1e-9);
    }
    if (l.type == LinkType::kPci) {
      EXPECT_DOUBLE_EQ(l.bw, 48.0);  // Gen5 x16
    }
  }
  Graph pcie = loadTopoFile(fixture("pcie_2s_8gpu.xml"));
  Paths paths(pcie);
  auto gpus = pcie.ofType(NodeType::kGpu);
  EXPECT_EQ(paths.get(gpus[0], gpus[1]).type, PathType::kPix);
  EXPECT_EQ(paths.get(gpus[0], gpus[2]).type, PathType::kPhb);
  EXPECT_EQ(paths.get(gpus[0], gpus[4]).type, PathType::kSys);
  EXPECT_DOUBLE_EQ(paths.get(gpus[0], gpus[4]).bw, 10.0);  // Skylake UPI
  EXPECT_DOUBLE_EQ(paths.get(gpus[0], gpus[1]).bw, 12.0);  // Gen3 x16
  Graph pairs = loadTopoFile(fixture("nvlink_pairs_4gpu.xml"));
  Paths pp(pairs);
  auto pg = pairs.ofType(NodeType::kGpu);
  EXPECT_EQ(pp.get(pg[0], pg[1]).type, PathType::kNvl);
  EXPECT_DOUBLE_EQ(pp.get(pg[0], pg[1]).bw, 4 * 12.0);  // sm86
  EXPECT_EQ(pp.get(pg[0], pg[2]).type, PathType::kPhb);
}

// Expects graphFromXml(text) to throw an error whose message contains every fragment.
void expectError(const std::string& text, std::initializer_list<const char*> fragments) {
  try {
    graphFromXml(parseXml(text, "bad.xml"), "bad.xml");
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kInvalidArgument);
    std::string msg = e.what();
    EXPECT_NE(msg.find("bad.xml"), std::string::npos) << msg;
    for (const char* f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
  }
}

const std::string kCpu = "<system version=\"1\">\n<cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\">\n";
std::string gpuPci(const std::string& bus, int dev, const std::string& inner = "") {
  return "<pci busid=\"" + bus + "\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n<gpu dev=\"" +
         std::to_string(dev) + "\" sm=\"80\" rank=\"" + std::to_string(dev) + "\" gdr=\"1\">" + inner +
         "</gpu></pci>\n";
}

TEST(TopoXml, BadFilesNameTheElement) {
  expectError("", {"empty"});
  expectError("   \n  ", {"empty"});
  expectError("<system version=\"1\"></system>", {"<system>", "no <cpu>"});
  expectError("<topology/>", {"<topology>", "root element"});
  expectError("<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\"", {"line 1", "malformed"});
  expectError(kCpu + gpuPci("0000:07:00.0", 0) + gpuPci("0000:07:00.0", 1) + "</cpu></system>",
              {"line 6", "<gpu>", "appears twice"});
  expectError(kCpu + gpuPci("0000:07:00.0", 0) + gpuPci("0000:08:00.0", 0) + "</cpu></system>",
              {"<gpu>", "dev 0 appears twice"});
  expectError(kCpu + gpuPci("0000:07:00.0", 0, "<nvlink target=\"0000:99:00.0\" count=\"4\" tclass=\"0x030200\"/>") +
                  "</cpu></system>",
              {"line 4", "<nvlink>", "unknown bus id 0000:99:00.0"});
  expectError(kCpu + gpuPci("0000:07:00.0", 0, "<nvlink target=\"0000:99:00.0\" count=\"4\"/>") + "</cpu></system>",
              {"<nvlink>", "unknown bus id"});
  expectError(kCpu + gpuPci("0000:07:00.0", 0, "<nvlink target=\"0000:c4:00.0\" count=\"-2\" tclass=\"0x068000\"/>") +
                  "</cpu></system>",
              {"<nvlink>", "count -2"});
  expectError(kCpu +
                  gpuPci("0000:07:00.0", 0, "<nvlink target=\"0000:c4:00.0\" count=\"100000\" tclass=\"0x068000\"/>") +
                  "</cpu></system>",
              {"<nvlink>", "out of range"});
  expectError(kCpu + "<nic><net name=\"ib0\" dev=\"0\" speed=\"-400000\"/></nic></cpu></system>",
              {"line 3", "<net>", "speed -400000"});
  expectError(kCpu + "<nic><net name=\"ib0\" dev=\"0\" speed=\"999999999\"/></nic></cpu></system>",
              {"<net>", "out of range"});
  expectError(kCpu + "<pci busid=\"0000:07:00.0\" class=\"0x060400\" link_width=\"-16\"/></cpu></system>",
              {"<pci>", "link_width -16"});
  expectError(kCpu + "<pci busid=\"zz:07\" class=\"0x060400\"/></cpu></system>", {"<pci>", "not a PCI bus id"});
  expectError(kCpu + "<pci class=\"0x060400\"/></cpu></system>", {"<pci>", "missing attribute busid"});
  expectError(kCpu + "<pci busid=\"0000:07:00.0\" class=\"0x030200\"><gpu sm=\"80\"/></pci></cpu></system>",
              {"<gpu>", "missing attribute dev"});
  expectError(kCpu + "<pci busid=\"0000:07:00.0\" class=\"0x030200\"><gpu dev=\"x1\"/></pci></cpu></system>",
              {"<gpu>", "not an integer"});
  expectError(kCpu + "<nic><net dev=\"0\"/><net dev=\"0\"/></nic></cpu></system>", {"<net>", "appears twice"});
  // A NIC at the bus id of its own switch (a device cannot be both).
  expectError(kCpu +
                  "<pci busid=\"0000:18:00.0\" class=\"0x060400\"><pci busid=\"0000:18:00.0\" class=\"0x020700\">"
                  "<nic><net dev=\"0\"/></nic></pci></pci></cpu></system>",
              {"line 3", "<pci>", "PCI bus id appears twice"});
  expectError(kCpu +
                  "<pci busid=\"0000:18:00.0\" class=\"0x030200\"/><pci busid=\"0000:18:00.0\" class=\"0x030200\"/>" +
                  "</cpu></system>",
              {"<pci>", "PCI bus id appears twice"});
  expectError(kCpu + gpuPci("0000:07:00.0", 0, "<c2c bw=\"-5\" count=\"10\"/>") + "</cpu></system>", {"<c2c>"});
}

TEST(TopoXml, PciClassCodes) {
  struct Case {
    const char* text;
    int cls;
    PciKind kind;
  };
  const Case cases[] = {{"0x030200", 0x030200, PciKind::kGpu},      {"0x030000", 0x030000, PciKind::kGpu},
                        {"0X0302", 0x030200, PciKind::kGpu},        {"0x03", 0x030000, PciKind::kGpu},
                        {"0x020700", 0x020700, PciKind::kIbHca},    {"020000", 0x020000, PciKind::kEthernet},
                        {"0x028000", 0x028000, PciKind::kNic},      {"0x060400", 0x060400, PciKind::kBridge},
                        {"0x068000", 0x068000, PciKind::kNvSwitch}, {"0x010802", 0x010802, PciKind::kOther}};
  for (const Case& c : cases) {
    int cls = -1;
    ASSERT_TRUE(parsePciClass(c.text, &cls)) << c.text;
    EXPECT_EQ(cls, c.cls) << c.text;
    EXPECT_EQ(pciKind(cls), c.kind) << c.text;
  }
  int cls = 0;
  for (const char* bad : {"", "0x", "0x0302000", "0xgpu", "3d controller"})
    EXPECT_FALSE(parsePciClass(bad, &cls)) << bad;
  EXPECT_EQ(pciKind(-1), PciKind::kUnknown);
  EXPECT_STREQ(pciKindName(PciKind::kIbHca), "IB HCA");
  EXPECT_EQ(formatPciClass(0x30200), "0x030200");
}

TEST(TopoXml, ClassCodeDevicesStayInTheGraph) {
  // A device with a class code and no <gpu>/<nic> child is a leaf PCI node with its class; a bridge class or a
  // child <pci> makes a switch; an NVLink to a class-code GPU is ignored; an NVSwitch device is the NVS target.
  std::string text = kCpu +
                     "<pci busid=\"0000:10:00.0\" class=\"0x060400\">"
                     "<pci busid=\"0000:11:00.0\" class=\"0x030200\"/>"
                     "<pci busid=\"0000:12:00.0\" class=\"0x020700\"/>"
                     "<pci busid=\"0000:13:00.0\" class=\"0x068000\"/>"
                     "<pci busid=\"0000:14:00.0\" class=\"0x010802\"/></pci>" +
                     gpuPci("0000:07:00.0", 0,
                            "<nvlink target=\"0000:11:00.0\" count=\"2\" tclass=\"0x030200\"/>"
                            "<nvlink target=\"0000:13:00.0\" count=\"12\"/>") +
                     "</cpu></system>";
  Graph g = graphFromXml(parseXml(text, "t"), "t");
  int sw = g.findByBusId(0, 0x10000);
  ASSERT_GE(sw, 0);
  EXPECT_FALSE(g.isClassOnlyDevice(sw));
  const std::pair<int64_t, PciKind> devices[] = {
      {0x11000, PciKind::kGpu}, {0x12000, PciKind::kIbHca}, {0x13000, PciKind::kNvSwitch}, {0x14000, PciKind::kOther}};
  for (const auto& [bus, kind] : devices) {
    int n = g.findByBusId(0, bus);
    ASSERT_GE(n, 0) << bus;
    EXPECT_TRUE(g.isClassOnlyDevice(n));
    EXPECT_EQ(pciKind(g.node(n).pciClass), kind);
    EXPECT_EQ(g.parentSwitch(n), sw);
    EXPECT_EQ(g.localCpu(n), g.ofType(NodeType::kCpu)[0]);
    EXPECT_NE(g.label(n).find(pciKindName(kind)), std::string::npos) << g.label(n);
  }
  int gpu = g.ofType(NodeType::kGpu).at(0);
  EXPECT_EQ(g.parentSwitch(gpu), -1);  // straight under the CPU
  double nvl = 0;
  for (const Link& l : g.node(gpu).links) {
    if (l.type == LinkType::kNvl) {
      EXPECT_EQ(g.node(l.to).type, NodeType::kNvs);
      nvl += l.bw;
    }
  }
  EXPECT_DOUBLE_EQ(nvl, 12 * 20.0);
}

TEST(TopoXml, UnknownElementsAndAttributesAreIgnored) {
  std::string text = kCpu + "<future_thing a=\"1\"/>" +
                     gpuPci("0000:07:00.0", 0,
                            "<nvlink target=\"0000:c4:00.0\" count=\"18\" tclass=\"0x068000\" "
                            "newattr=\"7\"/><mystery/>") +
                     "</cpu></system>";
  Graph g = graphFromXml(parseXml(text, "t"), "t");
  EXPECT_EQ(g.ofType(NodeType::kGpu).size(), 1u);
  EXPECT_EQ(g.ofType(NodeType::kNvs).size(), 1u);
}

TEST(TopoXml, MultiHostFilesStitchRingsThroughNics) {
  // Two DGX H100 hosts in one file, told apart by host_hash (as NCCL's multi-node dumps).
  XmlElement one = readXmlFile(fixture("dgx_h100.xml"));
  XmlElement both = one;
  both.children.clear();
  for (const char* hash : {"0xaaaa", "0xbbbb"}) {
    for (XmlElement cpu : one.children) {
      cpu.set("host_hash", hash);
      both.children.push_back(cpu);
    }
  }
  Graph g = graphFromXml(both, "two hosts");
  // Each host's NVSwitches are its own NVS node: the hosts meet only through their NICs.
  EXPECT_EQ(g.hostHashes().size(), 2u);
  EXPECT_EQ(g.ofType(NodeType::kGpu).size(), 16u);
  EXPECT_EQ(g.ofType(NodeType::kNvs).size(), 2u);
  Paths paths(g);
  SearchResult r = searchChannels(g, paths);
  EXPECT_TRUE(r.stitched);
  EXPECT_EQ(r.typeIntra, PathType::kNvl);
  ASSERT_FALSE(r.rings.empty());
  for (const auto& ring : r.rings) {
    EXPECT_EQ(ring.order.size(), 16u);
    EXPECT_EQ(ring.nets.size(), 2u);
  }
}

TEST(TopoXml, PcieMultiHostIsStitched) {
  XmlElement one = readXmlFile(fixture("pcie_2s_8gpu.xml"));
  XmlElement both = one;
  both.children.clear();
  for (const char* hash : {"0x1", "0x2", "0x3"}) {
    for (XmlElement cpu : one.children) {
      cpu.set("host_hash", hash);
      both.children.push_back(cpu);
    }
  }
  Graph g = graphFromXml(both, "three hosts");
  Paths paths(g);
  SearchResult r = searchChannels(g, paths);
  EXPECT_TRUE(r.stitched);
  ASSERT_FALSE(r.rings.empty());
  for (const auto& ring : r.rings) {
    ASSERT_EQ(ring.order.size(), 24u);
    ASSERT_EQ(ring.nets.size(), 3u);
    // Each host's GPUs are contiguous: three host boundaries per ring.
    int crossings = 0;
    for (size_t i = 0; i < ring.order.size(); ++i)
      crossings += g.node(r.gpus[ring.order[i]]).host != g.node(r.gpus[ring.order[(i + 1) % 24]]).host;
    EXPECT_EQ(crossings, 3);
    EXPECT_LE(ring.bw, 100.0 / 8 + 1e-9);  // the 100 Gb/s NIC
  }
  for (int t = 0; t < 2; ++t) {
    int cross = 0;
    for (int i = 0; i < 24; ++i) {
      int p = r.trees.parent[t][i];
      if (p >= 0) cross += g.node(r.gpus[i]).host != g.node(r.gpus[p]).host;
    }
    EXPECT_EQ(cross, 2);
  }
  XmlElement graphs = graphXml(g, r);
  EXPECT_EQ(graphs.name, "graphs");
  ASSERT_EQ(graphs.children.size(), 2u);
  EXPECT_EQ(*graphs.children[0].attr("pattern"), "4");
  EXPECT_NE(writeXml(graphs).find("<net dev=\"0\"/>"), std::string::npos);
}

TEST(TopoXml, TopoFileLoadsAsItIsWithoutDetection) {
  System raw = loadSystemFile(fixture("dgx_a100.xml"));
  EXPECT_EQ(raw.source, fixture("dgx_a100.xml"));
  EXPECT_EQ(raw.graph.ofType(NodeType::kGpu).size(), 8u);
  EXPECT_TRUE(raw.notes.empty());
}

TEST(TopoXml, DetectionDescribesThisMachine) {
  System s = detectSystem();
  EXPECT_GE(s.graph.ofType(NodeType::kCpu).size(), 1u);
  // The detected XML is NCCL's format: it reads back to the same graph.
  Graph again = graphFromXml(parseXml(writeXml(s.xml), "dump"), "dump");
  EXPECT_EQ(again.canonical(), s.graph.canonical());
}

}  // namespace
}  // namespace chorus::topology
