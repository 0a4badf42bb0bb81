// --assume (assume.h): class-code devices filled from the model table with NCCL's bandwidth constants, devices a
// file describes never changed, the report says what was filled, bad values are errors naming the value.
#include <gtest/gtest.h>

#include <set>

#include "base/error.h"
#include "topo_test_util.h"
#include "topology/assume.h"
#include "topology/nic_affinity.h"
#include "topology/paths.h"
#include "topology/topo_xml.h"

namespace chorus::topology {
namespace {

using testing::fixture;

Assumptions parse(std::initializer_list<const char*> values) {
  Assumptions a;
  for (const char* v : values) parseAssumption(v, &a);
  return a;
}

bool contains(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

double nvlinkTotal(const Graph& g, int gpu) {
  double bw = 0;
  for (const Link& l : g.node(gpu).links)
    if (l.type == LinkType::kNvl) bw += l.bw;
  return bw;
}

double netBw(const Graph& g, int net) {
  return g.node(net).links.at(0).bw;
}

TEST(TopoAssume, BadValuesNameTheValue) {
  struct Case {
    std::vector<const char*> values;
    std::vector<const char*> fragments;
  };
  const Case cases[] = {
      {{"gpu"}, {"--assume \"gpu\"", "gpu=MODEL"}},
      {{"cpu=epyc"}, {"cpu=epyc", "expected gpu=MODEL[,nvswitch] or nic=MODEL"}},
      {{"gpu=a100"}, {"gpu=a100", "unknown GPU model \"a100\"", "a100-sxm4", "h100-sxm5", "v100-sxm2"}},
      {{"gpu=a100-sxm4,nvlinks"}, {"unknown option \"nvlinks\"", "nvswitch"}},
      {{"gpu=a100-sxm4", "gpu=h100-sxm5"}, {"gpu=h100-sxm5", "was given already (a100-sxm4)"}},
      {{"nic=ib-xdr"}, {"unknown NIC model \"ib-xdr\"", "ib-hdr200", "ib-ndr400", "eth-100g"}},
      {{"nic=ib-hdr200,fast"}, {"takes no options"}},
      {{"nic=ib-hdr200", "nic=ib-ndr400"}, {"nic=ib-ndr400", "was given already (ib-hdr200)"}},
  };
  for (const Case& c : cases) {
    Assumptions a;
    try {
      for (const char* v : c.values) parseAssumption(v, &a);
      ADD_FAILURE() << "no error for " << c.values.back();
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::kInvalidArgument);
      for (const char* f : c.fragments) EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
    }
  }
  Assumptions both = parse({"nic=ib-hdr200", "nic=eth-100g", "gpu=h100-sxm5,nvswitch"});
  EXPECT_EQ(both.nics.size(), 2u);
  EXPECT_TRUE(both.nvswitch);
}

TEST(TopoAssume, ModelsCarryNcclsBandwidths) {
  // NVLink per link (NCCL's SM70/SM80 20, SM90 20.6, SM100 40.1 GB/s) x links; NET = Mb/s / 8000.
  const std::pair<const char*, double> gpus[] = {
      {"v100-sxm2", 6 * 20.0}, {"a100-sxm4", 12 * 20.0}, {"h100-sxm5", 18 * 20.6}, {"b200-sxm", 18 * 40.1}};
  for (const auto& [model, bw] : gpus) {
    XmlElement xml = readXmlFile(fixture("nvswitch_vm_8gpu_classonly.xml"));
    applyAssumptions(xml, parse({(std::string("gpu=") + model + ",nvswitch").c_str()}));
    Graph g = graphFromXml(xml, model);
    ASSERT_EQ(g.ofType(NodeType::kGpu).size(), 8u) << model;
    for (int gpu : g.ofType(NodeType::kGpu)) EXPECT_NEAR(nvlinkTotal(g, gpu), bw, 1e-9) << model;
    EXPECT_EQ(g.ofType(NodeType::kNvs).size(), 1u);
  }
  const std::pair<const char*, double> nics[] = {{"ib-hdr200", 25.0}, {"ib-ndr400", 50.0}, {"ib-edr100", 12.5}};
  for (const auto& [model, bw] : nics) {
    XmlElement xml = readXmlFile(fixture("nvswitch_vm_8gpu_classonly.xml"));
    applyAssumptions(xml, parse({(std::string("nic=") + model).c_str()}));
    Graph g = graphFromXml(xml, model);
    ASSERT_EQ(g.ofType(NodeType::kNet).size(), 8u) << model;
    for (int net : g.ofType(NodeType::kNet)) EXPECT_DOUBLE_EQ(netBw(g, net), bw) << model;
  }
}

TEST(TopoAssume, PreviewOfTheNvswitchVm) {
  XmlElement xml = readXmlFile(fixture("nvswitch_vm_8gpu_classonly.xml"));
  auto lines = applyAssumptions(xml, parse({"gpu=a100-sxm4,nvswitch", "nic=ib-hdr200"}));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(contains(lines, "--assume gpu=a100-sxm4,nvswitch: filled 8 GPU(s) as A100-SXM4"));
  EXPECT_TRUE(contains(lines, "--assume nic=ib-hdr200: filled 8 NIC(s)"));
  Graph g = graphFromXml(xml, "vm");
  auto gpus = g.ofType(NodeType::kGpu);
  ASSERT_EQ(gpus.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(g.node(gpus[i]).index, i);  // devs in bus id order
  Paths paths(g);
  EXPECT_EQ(paths.get(gpus[0], gpus[7]).type, PathType::kNvl);
  std::set<int> nets;
  for (const GpuNic& pair : gpuNicAffinity(g, paths)) {
    EXPECT_EQ(pair.type, PathType::kPix);
    EXPECT_EQ(g.parentSwitch(g.node(pair.net).links[0].to), g.parentSwitch(pair.gpu));
    nets.insert(pair.net);
  }
  EXPECT_EQ(nets.size(), 8u);
}

TEST(TopoAssume, NicModelsFillTheirOwnClass) {
  const std::string file = fixture("pcie_2s_8gpu_classonly.xml");
  {
    XmlElement xml = readXmlFile(file);
    auto lines = applyAssumptions(xml, parse({"gpu=v100-sxm2", "nic=ib-edr100"}));
    EXPECT_TRUE(contains(lines, "filled 8 GPU(s) as V100-SXM2 (sm 70, no NVLink: PCIe only)"));
    EXPECT_TRUE(contains(lines, "--assume nic=ib-edr100: filled 1 NIC(s)"));
    EXPECT_TRUE(contains(lines, "1 NIC(s) listed by class code only stay undescribed"));
    Graph g = graphFromXml(xml, "one nic");
    EXPECT_EQ(g.ofType(NodeType::kNet).size(), 1u);
    for (int gpu : g.ofType(NodeType::kGpu)) EXPECT_EQ(nvlinkTotal(g, gpu), 0.0);
    int eth = g.findByBusId(0, 0xd8000);
    ASSERT_GE(eth, 0);
    EXPECT_TRUE(g.isClassOnlyDevice(eth));
  }
  {
    XmlElement xml = readXmlFile(file);
    applyAssumptions(xml, parse({"gpu=v100-sxm2", "nic=ib-edr100", "nic=eth-100g"}));
    Graph g = graphFromXml(xml, "two nics");
    ASSERT_EQ(g.ofType(NodeType::kNet).size(), 2u);
    Paths paths(g);
    // Each socket's GPUs pair with that socket's NIC, straight under the same CPU (PHB).
    for (const GpuNic& pair : gpuNicAffinity(g, paths)) {
      EXPECT_EQ(pair.type, PathType::kPhb);
      EXPECT_EQ(g.localCpu(pair.gpu), g.localCpu(g.node(pair.net).links[0].to));
    }
  }
  {
    // Only Ethernet-class NICs in the file (as RoCE or cloud NICs report): an InfiniBand model fills them anyway.
    XmlElement xml = readXmlFile(file);
    for (auto& cpu : xml.children)
      for (auto& pci : cpu.children)
        if (*pci.attr("class") == "0x020700") pci.set("class", "0x020000");
    auto lines = applyAssumptions(xml, parse({"nic=ib-ndr400"}));
    EXPECT_TRUE(contains(lines, "filled 2 NIC(s)")) << lines[1];
    EXPECT_TRUE(contains(lines, "not of this model's class"));
    EXPECT_EQ(graphFromXml(xml, "roce").ofType(NodeType::kNet).size(), 2u);
  }
}

TEST(TopoAssume, DescribedFilesAreUnchanged) {
  for (const char* name : {"dgx_a100.xml", "dgx_h100.xml", "pcie_2s_8gpu.xml", "nvlink_pairs_4gpu.xml"}) {
    XmlElement xml = readXmlFile(fixture(name));
    Graph before = graphFromXml(xml, name);
    auto lines = applyAssumptions(xml, parse({"gpu=h100-sxm5,nvswitch", "nic=ib-ndr400"}));
    EXPECT_EQ(graphFromXml(xml, name).canonical(), before.canonical()) << name;
    EXPECT_TRUE(contains(lines, "nothing to fill: the file describes its")) << name << ": " << lines[0];
  }
}

TEST(TopoAssume, FilledDevsSkipTheNumbersTheFileUses) {
  // Half described, half class code only: the filled GPUs take the devs the file leaves free.
  XmlElement xml = readXmlFile(fixture("nvswitch_vm_8gpu_classonly.xml"));
  XmlElement& first = xml.children[0].children[0].children[0];  // GPU 0000:13:00.0
  XmlElement& gpu = first.add("gpu");
  gpu.set("dev", "0");
  gpu.set("sm", "80");
  XmlElement& second = xml.children[1].children[0].children[0];  // GPU 0000:53:00.0
  XmlElement& gpu2 = second.add("gpu");
  gpu2.set("dev", "3");
  gpu2.set("sm", "80");
  auto lines = applyAssumptions(xml, parse({"gpu=a100-sxm4"}));
  EXPECT_TRUE(contains(lines, "filled 6 GPU(s)"));
  EXPECT_TRUE(contains(lines, "2 GPU(s) described by the file left unchanged"));
  Graph g = graphFromXml(xml, "mixed");
  std::set<int> devs;
  for (int n : g.ofType(NodeType::kGpu)) devs.insert(g.node(n).index);
  EXPECT_EQ(devs, (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(g.node(g.findByBusId(0, 0x15000)).index, 1);
  EXPECT_EQ(g.node(g.findByBusId(0, 0x55000)).index, 2);
}

}  // namespace
}  // namespace chorus::topology
