// chorus-topo on the fixtures, as a user runs it: class-code devices shown with their switch and NUMA node,
// --assume previews (GPU path matrix, rings, trees, GPU-NIC pairs, the NIC of each channel), --assume on described
// files changes nothing and says so, --merge, CHORUS_GRAPH_DUMP_FILE with the NIC of each channel, bad values.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

namespace {

std::string fixture(const std::string& name) {
  std::string here = __FILE__;
  return here.substr(0, here.rfind("/topo_tool/")) + "/fixtures/" + name;
}

struct ToolRun {
  int status = -1;
  std::string out;  // stdout and stderr
};

ToolRun run(const std::string& args, const std::string& env = "") {
  ToolRun r;
  std::string cmd = env + " " + CHORUS_TOPO_PATH + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

nlohmann::json runJson(const std::string& args) {
  ToolRun r = run(args + " --json");
  EXPECT_EQ(r.status, 0) << r.out;
  return nlohmann::json::parse(r.out);
}

const std::string kVm = fixture("nvswitch_vm_8gpu_classonly.xml");
const std::string kTwoSocket = fixture("pcie_2s_8gpu_classonly.xml");

TEST(ChorusTopo, ClassCodeDevicesWithTheirSwitchAndNumaNode) {
  nlohmann::json j = runJson("--topo-file " + kVm);
  EXPECT_TRUE(j["gpus"].empty());
  std::map<std::string, int> kinds;
  std::map<int, std::set<std::string>> switchesOfNuma;
  for (const auto& d : j["devices"]) {
    EXPECT_TRUE(d["class_only"].get<bool>());
    ++kinds[d["kind"].get<std::string>()];
    std::string parent = d["parent"];
    EXPECT_EQ(parent.rfind("switch ", 0), 0u) << parent;
    switchesOfNuma[d["numa"].get<int>()].insert(parent);
  }
  EXPECT_EQ(kinds["GPU"], 8);
  EXPECT_EQ(kinds["IB HCA"], 8);
  ASSERT_EQ(switchesOfNuma.size(), 4u);  // four NUMA nodes, one switch each
  for (const auto& [numa, switches] : switchesOfNuma) EXPECT_EQ(switches.size(), 1u) << numa;
  ToolRun text = run("--topo-file " + kVm);
  EXPECT_NE(text.out.find("listed by class code only: 8 GPU, 8 IB HCA"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("--assume gpu=MODEL[,nvswitch] previews"), std::string::npos) << text.out;

  nlohmann::json two = runJson("--topo-file " + kTwoSocket);
  int straight = 0;
  for (const auto& d : two["devices"])
    if (d["kind"] == "GPU") straight += d["parent"] == "CPU " + std::to_string(d["numa"].get<int>());
  EXPECT_EQ(straight, 8);  // GPUs straight under the CPU of their socket
}

TEST(ChorusTopo, AssumePreviewsTheMachine) {
  nlohmann::json j = runJson("--topo-file " + kVm + " --assume gpu=a100-sxm4,nvswitch --assume nic=ib-hdr200");
  ASSERT_EQ(j["gpus"].size(), 8u);
  ASSERT_EQ(j["nics"].size(), 8u);
  for (const auto& row : j["gpu_paths"])
    for (const auto& t : row) EXPECT_TRUE(t == "NVL" || t == "LOC") << t;
  std::set<int> nets;
  for (const auto& p : j["gpu_nics"]) {
    EXPECT_EQ(p["path"], "PIX");
    nets.insert(p["net"].get<int>());
  }
  EXPECT_EQ(nets.size(), 8u);
  EXPECT_FALSE(j["rings"].empty());
  EXPECT_EQ(j["trees"].size(), 2u);
  ASSERT_FALSE(j["multi_node_rings"].empty());
  for (const auto& ring : j["multi_node_rings"]) EXPECT_EQ(ring["nets"].size(), 1u);
  std::string notes = j["notes"].dump();
  EXPECT_NE(notes.find("filled 8 GPU(s) as A100-SXM4"), std::string::npos) << notes;
  EXPECT_NE(notes.find("filled 8 NIC(s)"), std::string::npos) << notes;

  ToolRun text = run("--topo-file " + kVm + " --assume gpu=a100-sxm4,nvswitch --assume nic=ib-hdr200");
  for (const char* part : {"GPU-NIC pairs", "Multi-node channels", "channel 0: NET/0 >", "Paths (dev)", "Trees"})
    EXPECT_NE(text.out.find(part), std::string::npos) << part << "\n" << text.out;

  nlohmann::json two =
      runJson("--topo-file " + kTwoSocket + " --assume gpu=v100-sxm2 --assume nic=ib-edr100 --assume nic=eth-100g");
  ASSERT_EQ(two["gpu_nics"].size(), 8u);
  for (const auto& p : two["gpu_nics"]) {
    EXPECT_EQ(p["path"], "PHB");
    EXPECT_EQ(p["net"].get<int>(), p["gpu"].get<int>() < 4 ? 0 : 1);
  }
}

TEST(ChorusTopo, AssumeOnADescribedFileChangesNothing) {
  for (const char* name : {"dgx_a100.xml", "dgx_h100.xml", "pcie_2s_8gpu.xml"}) {
    nlohmann::json plain = runJson("--topo-file " + fixture(name));
    nlohmann::json assumed =
        runJson("--topo-file " + fixture(name) + " --assume gpu=h100-sxm5,nvswitch" + " --assume nic=ib-ndr400");
    std::string notes = assumed["notes"].dump();
    EXPECT_NE(notes.find("nothing to fill"), std::string::npos) << notes;
    for (auto* j : {&plain, &assumed}) {
      j->erase("source");
      j->erase("notes");
    }
    EXPECT_EQ(plain, assumed) << name;
  }
}

TEST(ChorusTopo, GraphDumpNamesTheNicOfEachChannel) {
  std::string dump = ::testing::TempDir() + "/chorus_topo_graph.xml";
  ToolRun r = run("--topo-file " + kVm + " --assume gpu=h100-sxm5,nvswitch --assume nic=ib-ndr400 --multi-node",
                  "CHORUS_GRAPH_DUMP_FILE=" + dump);
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream f(dump);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string xml = ss.str();
  std::remove(dump.c_str());
  size_t channels = 0, nets = 0;
  for (size_t pos = xml.find("<channel"); pos != std::string::npos; pos = xml.find("<channel", pos + 1)) ++channels;
  for (size_t pos = xml.find("<net dev="); pos != std::string::npos; pos = xml.find("<net dev=", pos + 1)) ++nets;
  ASSERT_GT(channels, 2u);
  EXPECT_EQ(nets, 2 * (channels - 2)) << xml;  // every ring channel enters and leaves by a NET; the 2 trees have none
  // NCCL's typeinter names the path between a channel's end GPUs and their NICs: PIX on this VM (each pair shares a
  // switch); "NET" is no type NCCL's graph reader knows.
  EXPECT_NE(xml.find("typeinter=\"PIX\""), std::string::npos) << xml;
}

TEST(ChorusTopo, MergeOnThisMachineKeepsTheFilesDevices) {
  nlohmann::json j = runJson("--topo-file " + kVm + " --merge");
  int listed = 0;
  for (const auto& d : j["devices"]) listed += d["kind"] == "GPU" || d["kind"] == "IB HCA";
  EXPECT_GE(listed, 16);
  EXPECT_NE(j["source"].get<std::string>().find("+ detected"), std::string::npos);
}

TEST(ChorusTopo, BadArgumentsNameTheValue) {
  ToolRun r = run("--topo-file " + kVm + " --assume gpu=a100");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("unknown GPU model \"a100\""), std::string::npos) << r.out;
  r = run("--topo-file " + kVm + " --assume nic=ib-hdr200,x");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("nic=ib-hdr200,x"), std::string::npos) << r.out;
  r = run("--merge", "CHORUS_TOPO_FILE=");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("--merge needs a topology file"), std::string::npos) << r.out;
}

}  // namespace
