// Merging detection into a topology file as NCCL does (topo_merge.h), with detection injected as data (a fake
// machine): the file's placement wins, detection describes the devices at the bus ids the file lists, devices the
// machine lacks stay as PCI devices of their class and are reported, detected devices the file lacks are added
// where detection places them and reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <set>

#include "base/params.h"
#include "topo_test_util.h"
#include "topology/nic_affinity.h"
#include "topology/paths.h"
#include "topology/pci_class.h"
#include "topology/topo_merge.h"
#include "topology/topo_xml.h"

namespace chorus::topology {
namespace {

using testing::FakeMachine;
using testing::fixture;

const char* const kVm = "nvswitch_vm_8gpu_classonly.xml";
// The VM fixture's devices: per NUMA node n a switch at bus 0x10 + 0x40 n, GPUs at +3 and +5, HCAs at +4 and +6.
const char* const kVmGpus[] = {"0000:13:00.0", "0000:15:00.0", "0000:53:00.0", "0000:55:00.0",
                               "0000:93:00.0", "0000:95:00.0", "0000:d3:00.0", "0000:d5:00.0"};
const char* const kVmHcas[] = {"0000:14:00.0", "0000:16:00.0", "0000:54:00.0", "0000:56:00.0",
                               "0000:94:00.0", "0000:96:00.0", "0000:d4:00.0", "0000:d6:00.0"};

const char* const kVmSwitches[] = {"0000:10:00.0", "0000:50:00.0", "0000:90:00.0", "0000:d0:00.0"};

int64_t bus(const std::string& text) {
  int64_t id = -1;
  EXPECT_TRUE(parseBusId(text, &id)) << text;
  return id;
}

// A VM's sysfs often shows passed-through devices with no switch above them and no NUMA node: all under CPU 0.
FakeMachine vmMachine(int gpus, int hcas) {
  FakeMachine m;
  for (int i = 0; i < gpus; ++i) m.gpu(kVmGpus[i], i, 80, 12);
  for (int i = 0; i < hcas; ++i) m.nic(kVmHcas[i], "mlx5_" + std::to_string(i), i, 200000);
  return m;
}

std::set<std::string> busIds(const std::vector<MergeEntry>& entries) {
  std::set<std::string> out;
  for (const auto& e : entries) out.insert(e.busId);
  return out;
}

TEST(TopoMerge, ClassCodeFileIsFilledAtItsBusIds) {
  XmlElement file = readXmlFile(fixture(kVm));
  MergeReport report = mergeDetected(file, vmMachine(8, 8).xml(), 0);
  EXPECT_EQ(report.filled.size(), 16u);
  EXPECT_TRUE(report.added.empty());
  EXPECT_TRUE(report.missing.empty());
  Graph g = graphFromXml(file, "merged");
  ASSERT_EQ(g.ofType(NodeType::kGpu).size(), 8u);
  ASSERT_EQ(g.ofType(NodeType::kNet).size(), 8u);
  for (int i = 0; i < 8; ++i) {
    // Placement from the file (switch and NUMA node), description from detection.
    int gpu = g.findByBusId(0, bus(kVmGpus[i]));
    ASSERT_GE(gpu, 0);
    EXPECT_EQ(g.node(gpu).type, NodeType::kGpu);
    EXPECT_EQ(g.node(gpu).index, i);
    EXPECT_EQ(g.node(gpu).sm, 80);
    EXPECT_EQ(g.node(g.localCpu(gpu)).index, i / 2);
    EXPECT_EQ(g.node(g.parentSwitch(gpu)).busId, bus(kVmSwitches[i / 2]));
    for (const Link& l : g.node(gpu).links) {
      if (l.type == LinkType::kNvl) {
        EXPECT_DOUBLE_EQ(l.bw, 12 * 20.0);
      }
    }
    int nic = g.findByBusId(0, bus(kVmHcas[i]));
    ASSERT_GE(nic, 0);
    EXPECT_EQ(g.node(nic).type, NodeType::kNic);
    EXPECT_EQ(g.parentSwitch(nic), g.parentSwitch(gpu));
  }
  Paths paths(g);
  std::set<int> nets;
  for (const GpuNic& pair : gpuNicAffinity(g, paths)) {
    EXPECT_EQ(pair.type, PathType::kPix);
    nets.insert(pair.net);
  }
  EXPECT_EQ(nets.size(), 8u);  // two GPUs and two HCAs per switch pair one to one
}

TEST(TopoMerge, DevicesTheMachineLacksStayAsClassCodeDevices) {
  XmlElement file = readXmlFile(fixture(kVm));
  MergeReport report = mergeDetected(file, vmMachine(4, 3).xml(), 0);
  EXPECT_EQ(report.filled.size(), 7u);
  std::set<std::string> expected = {kVmGpus[4], kVmGpus[5], kVmGpus[6], kVmGpus[7], kVmHcas[3],
                                    kVmHcas[4], kVmHcas[5], kVmHcas[6], kVmHcas[7]};
  EXPECT_EQ(busIds(report.missing), expected);
  for (const auto& e : report.missing) {
    bool isGpu = std::find(std::begin(kVmGpus), std::end(kVmGpus), e.busId) != std::end(kVmGpus);
    EXPECT_EQ(e.kind, isGpu ? "GPU" : "IB HCA") << e.busId;
    EXPECT_NE(e.detail.find("kept as a PCI device of its class"), std::string::npos) << e.detail;
  }
  Graph g = graphFromXml(file, "merged");
  EXPECT_EQ(g.ofType(NodeType::kGpu).size(), 4u);
  EXPECT_EQ(g.ofType(NodeType::kNet).size(), 3u);
  // Never dropped: every device of the file is in the graph, the missing ones as PCI devices of their class.
  for (const std::string& b : expected) {
    int node = g.findByBusId(0, bus(b));
    ASSERT_GE(node, 0) << b;
    EXPECT_TRUE(g.isClassOnlyDevice(node)) << b;
    EXPECT_GE(g.parentSwitch(node), 0) << b;
  }
  auto described = report.describe();
  EXPECT_EQ(described.size(), 16u);
  EXPECT_NE(described.back().find("not on this machine"), std::string::npos) << described.back();
}

TEST(TopoMerge, DetectedDevicesTheFileLacksAreAddedWhereDetectionPlacesThem) {
  XmlElement file = readXmlFile(fixture(kVm));
  FakeMachine m = vmMachine(8, 8);
  m.gpu("0000:d8:00.0", 8, 80, 12, 3, {"0000:d0:00.0"});               // under a switch the file lists
  m.nic("0000:e1:00.0", "mlx5_8", 8, 400000, 1, 2, {"0000:e0:00.0"});  // under a switch it does not list
  m.gpu("0000:f1:00.0", 9, 80, 12, 5);                                 // on a NUMA node the file lacks
  MergeReport report = mergeDetected(file, m.xml(), 0);
  ASSERT_EQ(report.added.size(), 3u);
  EXPECT_EQ(report.added[0].busId, "0000:d8:00.0");
  EXPECT_NE(report.added[0].detail.find("added under switch 0000:d0:00.0"), std::string::npos);
  EXPECT_NE(report.added[1].detail.find("added under CPU 2"), std::string::npos) << report.added[1].detail;
  EXPECT_NE(report.added[2].detail.find("new CPU 5"), std::string::npos) << report.added[2].detail;
  Graph g = graphFromXml(file, "merged");
  EXPECT_EQ(g.hostHashes().size(), 1u);
  EXPECT_EQ(g.ofType(NodeType::kGpu).size(), 10u);
  int d8 = g.findByBusId(0, bus("0000:d8:00.0"));
  EXPECT_EQ(g.node(g.parentSwitch(d8)).busId, bus("0000:d0:00.0"));
  int e1 = g.findByBusId(0, bus("0000:e1:00.0"));
  EXPECT_EQ(g.node(g.parentSwitch(e1)).busId, bus("0000:e0:00.0"));
  EXPECT_EQ(g.node(g.localCpu(e1)).index, 2);
  int f1 = g.findByBusId(0, bus("0000:f1:00.0"));
  EXPECT_EQ(g.node(g.localCpu(f1)).index, 5);
}

TEST(TopoMerge, DescribedFileOnAMachineWithoutThoseDevices) {
  // This development machine's case: a DGX A100 file, no GPU or HCA detected.
  XmlElement file = readXmlFile(fixture("dgx_a100.xml"));
  FakeMachine none;
  none.cpu(0);
  MergeReport report = mergeDetected(file, none.xml(), 0);
  EXPECT_EQ(report.missing.size(), 16u);
  Graph g = graphFromXml(file, "merged");
  EXPECT_EQ(g.ofType(NodeType::kGpu).size(), 0u);
  EXPECT_EQ(g.ofType(NodeType::kNet).size(), 0u);
  int gpus = 0, hcas = 0;
  for (int i = 0; i < g.size(); ++i) {
    if (!g.isClassOnlyDevice(i)) continue;
    gpus += pciKind(g.node(i).pciClass) == PciKind::kGpu;
    hcas += pciKind(g.node(i).pciClass) == PciKind::kIbHca;
  }
  EXPECT_EQ(gpus, 8);
  EXPECT_EQ(hcas, 8);
}

TEST(TopoMerge, FileValuesWinButTheMachineNumbersDevices) {
  XmlElement file = readXmlFile(fixture("dgx_a100.xml"));
  Graph original = graphFromXml(file, "file");
  FakeMachine m;
  auto gpus = original.ofType(NodeType::kGpu);
  for (size_t i = 0; i < gpus.size(); ++i)  // devs reversed, no NVLinks seen
    m.gpu(formatBusId(original.node(gpus[i]).busId), static_cast<int>(7 - i), 80, 0, 0);
  for (int net : original.ofType(NodeType::kNet)) {
    int nic = original.node(net).links[0].to;
    m.nic(formatBusId(original.node(nic).busId), original.node(net).name, 7 - original.node(net).index, 200000);
  }
  MergeReport report = mergeDetected(file, m.xml(), 0);
  EXPECT_TRUE(report.missing.empty());
  EXPECT_TRUE(report.added.empty());
  Graph g = graphFromXml(file, "merged");
  for (size_t i = 0; i < gpus.size(); ++i) {
    int gpu = g.findByBusId(0, original.node(gpus[i]).busId);
    EXPECT_EQ(g.node(gpu).index, static_cast<int>(7 - i));
    double nvl = 0;
    for (const Link& l : g.node(gpu).links)
      if (l.type == LinkType::kNvl) nvl += l.bw;
    EXPECT_DOUBLE_EQ(nvl, 12 * 20.0);  // the file's NVLinks are kept
  }
  for (int net : g.ofType(NodeType::kNet)) {
    int orig = -1;
    for (int o : original.ofType(NodeType::kNet))
      if (original.node(o).name == g.node(net).name) orig = o;
    ASSERT_GE(orig, 0);
    EXPECT_EQ(g.node(net).index, 7 - original.node(orig).index);
  }
}

TEST(TopoMerge, NvlinkToAGpuTheMachineLacksIsIgnored) {
  XmlElement file = readXmlFile(fixture("nvlink_pairs_4gpu.xml"));
  FakeMachine m;
  m.gpu("0000:21:00.0", 0, 86, 0);
  m.gpu("0000:41:00.0", 1, 86, 0);
  m.gpu("0000:61:00.0", 2, 86, 0);
  m.nic("0000:81:00.0", "enp129s0f0", 0, 10000);
  MergeReport report = mergeDetected(file, m.xml(), 0);
  EXPECT_EQ(busIds(report.missing), std::set<std::string>{"0000:01:00.0"});
  Graph g = graphFromXml(file, "merged");
  EXPECT_EQ(g.ofType(NodeType::kGpu).size(), 3u);
  int lonely = g.findByBusId(0, bus("0000:21:00.0"));
  for (const Link& l : g.node(lonely).links) EXPECT_NE(l.type, LinkType::kNvl);
  Paths paths(g);
  EXPECT_EQ(paths.get(g.findByBusId(0, bus("0000:41:00.0")), g.findByBusId(0, bus("0000:61:00.0"))).type,
            PathType::kNvl);
}

TEST(TopoMerge, NicPortsAndVirtualInterfaces) {
  XmlElement file = readXmlFile(fixture("pcie_2s_8gpu.xml"));
  // A virtual interface the machine lacks, in the file.
  XmlElement& stale = file.children[0].add("nic").add("net");
  stale.set("name", "vnet9");
  stale.set("dev", "5");
  FakeMachine m;
  m.nic("0000:20:00.0", "mlx5_0", 0, 100000, 2);  // port 2 is up, port 1 (in the file) is not
  m.virtualNic("docker0", 1);
  MergeReport report = mergeDetected(file, m.xml(), 0);
  ASSERT_EQ(report.filled.size(), 1u);
  std::set<std::string> missing;
  for (const auto& e : report.missing) missing.insert(e.detail);
  EXPECT_TRUE(std::any_of(missing.begin(), missing.end(),
                          [](const std::string& d) { return d.find("port mlx5_0:1") != std::string::npos; }));
  EXPECT_TRUE(std::any_of(missing.begin(), missing.end(),
                          [](const std::string& d) { return d.find("vnet9") != std::string::npos; }));
  EXPECT_TRUE(std::any_of(report.notes.begin(), report.notes.end(),
                          [](const std::string& n) { return n.find("docker0") != std::string::npos; }));
  Graph g = graphFromXml(file, "merged");
  std::set<std::string> names;
  for (int net : g.ofType(NodeType::kNet)) names.insert(g.node(net).name);
  EXPECT_EQ(names, (std::set<std::string>{"mlx5_0", "docker0"}));
  EXPECT_EQ(g.ofType(NodeType::kGpu).size(), 0u);  // the machine has none of the file's GPUs
}

TEST(TopoMerge, OnlyThisHostsCpusOfAMultiHostFileAreMerged) {
  XmlElement file = testing::replicate(readXmlFile(fixture(kVm)), 2);
  MergeReport report = mergeDetected(file, vmMachine(8, 8).xml(), 0x2);
  EXPECT_EQ(report.filled.size(), 16u);
  Graph g = graphFromXml(file, "merged");
  ASSERT_EQ(g.hostHashes().size(), 2u);
  for (int gpu : g.ofType(NodeType::kGpu)) EXPECT_EQ(g.hostHashes()[g.node(gpu).host], 0x2u);
  EXPECT_EQ(g.ofType(NodeType::kGpu).size(), 8u);
  // A file that names other hosts only: its first host is taken as this one, and the report says so.
  XmlElement other = testing::replicate(readXmlFile(fixture(kVm)), 2);
  MergeReport r2 = mergeDetected(other, vmMachine(8, 8).xml(), 0x99);
  EXPECT_EQ(r2.filled.size(), 16u);
  ASSERT_FALSE(r2.notes.empty());
  EXPECT_NE(r2.notes[0].find("first host"), std::string::npos);
}

TEST(TopoMerge, LoadSystemMergesTheTopoFileAndDumpsTheResult) {
  std::string dump = ::testing::TempDir() + "/chorus_topo_merge_dump.xml";
  setenv("CHORUS_TOPO_FILE", fixture(kVm).c_str(), 1);
  setenv("CHORUS_TOPO_DUMP_FILE", dump.c_str(), 1);
  param::reload();
  System s = loadSystem(vmMachine(6, 8).detector());
  unsetenv("CHORUS_TOPO_FILE");
  unsetenv("CHORUS_TOPO_DUMP_FILE");
  param::reload();
  EXPECT_EQ(s.graph.ofType(NodeType::kGpu).size(), 6u);
  EXPECT_EQ(s.graph.ofType(NodeType::kNet).size(), 8u);
  EXPECT_FALSE(s.notes.empty());
  Graph again = loadTopoFile(dump);
  EXPECT_EQ(again.canonical(), s.graph.canonical());
  std::remove(dump.c_str());
}

TEST(TopoMerge, TheRealDetectorKeepsEveryDeviceOfTheFile) {
  // Whatever this machine has, no device of the file disappears.
  System s = mergeSystemFile(fixture(kVm));
  for (const char* b : kVmGpus) EXPECT_GE(s.graph.findByBusId(0, bus(b)), 0) << b;
  for (const char* b : kVmHcas) EXPECT_GE(s.graph.findByBusId(0, bus(b)), 0) << b;
}

}  // namespace
}  // namespace chorus::topology
