// The topology graph: nodes (GPU, PCI switch, NVSwitch, CPU = one NUMA domain, NIC, NET) joined by directed
// links (NVLink, PCI, C2C, SYS = CPU interconnect, NET) that carry a bandwidth in GB/s, as NCCL's ncclTopoSystem.
// Every physical link is two directed links, one per direction, each with the full bandwidth.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chorus::topology {

enum class NodeType : int { kGpu = 0, kPci, kNvs, kCpu, kNic, kNet, kCount };
enum class LinkType : int { kLoc = 0, kNvl, kC2c, kPci, kSys, kNet };
// Path types in NCCL's order: the larger, the farther.
enum class PathType : int { kLoc = 0, kNvl, kNvb, kC2c, kPix, kPxb, kP2c, kPxn, kPhb, kSys, kNet, kDis };

const char* nodeTypeName(NodeType t);
const char* linkTypeName(LinkType t);
const char* pathTypeName(PathType t);
// "NVL" -> kNvl, ...; false when unknown.
bool parsePathType(const std::string& name, PathType* type);

enum class CpuVendor : int { kUnknown = 0, kIntel, kAmd, kZhaoxin };
enum class CpuArch : int { kUnknown = 0, kX86, kArm, kPower };

struct Link {
  LinkType type = LinkType::kLoc;
  int to = -1;    // index of the remote node
  double bw = 0;  // GB/s in this direction
};

struct Node {
  NodeType type = NodeType::kPci;
  int host = 0;        // index into Graph::hostHashes()
  int64_t busId = -1;  // PCI bus id as NCCL's busIdToInt64 (GPU, PCI, NIC); -1 otherwise
  // PCI class code from the file (GPU, PCI, NIC); -1 when not given. A PCI node whose class is not a bridge's is a
  // device the file lists by class code only (a GPU or NIC that neither the file nor detection described): it
  // stays in the graph, a leaf under its switch, so tools show it and --assume can fill it (pci_class.h).
  int pciClass = -1;
  int index = 0;     // GPU: dev; CPU: NUMA id; NET: dev; NVS: 0
  int rank = -1;     // GPU: rank from the XML
  int sm = 0;        // GPU: compute capability x10
  int gdr = 0;       // GPU, NET: GPUDirect RDMA support
  std::string name;  // NET: interface name; CPU: "vendor model"
  CpuArch arch = CpuArch::kUnknown;
  CpuVendor vendor = CpuVendor::kUnknown;
  int familyId = 0, modelId = 0;
  std::vector<Link> links;
};

class Graph {
 public:
  int addNode(Node node);
  // Adds a directed link; a second link of the same type between the same nodes adds its bandwidth (so NVLinks
  // listed one element per switch add up, as in NCCL).
  void connect(int from, int to, LinkType type, double bw);
  void connectBoth(int a, int b, LinkType type, double bw) {
    connect(a, b, type, bw);
    connect(b, a, type, bw);
  }

  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(int i) const { return nodes_[i]; }
  Node& mutableNode(int i) { return nodes_[i]; }
  int size() const { return static_cast<int>(nodes_.size()); }
  // Indices of the nodes of one type, in host then index (GPU dev, NUMA id, NET dev) then bus id order.
  std::vector<int> ofType(NodeType type) const;
  // The node of this type and bus id on this host, or -1.
  int findByBusId(int host, int64_t busId) const;
  int findByIndex(NodeType type, int host, int index) const;
  // The CPU (NUMA domain) a node hangs from, found by walking up PCI links; -1 when none.
  int localCpu(int node) const;
  // The PCI switch a device hangs from (its parent PCI node), or -1 when it hangs straight from a CPU.
  int parentSwitch(int node) const;
  // True for a PCI node that stands for a device listed by class code only (not a bridge).
  bool isClassOnlyDevice(int node) const;

  std::vector<uint64_t>& hostHashes() { return hostHashes_; }
  const std::vector<uint64_t>& hostHashes() const { return hostHashes_; }
  int hostIndex(uint64_t hash);  // adds the host when new

  // A canonical text of every node and link (sorted), equal for equal graphs; used to compare graphs.
  std::string canonical() const;
  // "GPU/0 (0000:07:00.0)" style label for messages and tools.
  std::string label(int node) const;

 private:
  std::vector<Node> nodes_;
  std::vector<uint64_t> hostHashes_;
};

// "0000:07:00.0" -> 0x7000 as NCCL's busIdToInt64 (hex digits, separators ignored); false on garbage.
bool parseBusId(const std::string& text, int64_t* id);
std::string formatBusId(int64_t id);

}  // namespace chorus::topology
