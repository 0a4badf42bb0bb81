#include <cstdio>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "report.h"
#include "topology/host_order.h"
#include "topology/pci_class.h"

namespace chorus::tools {

using topology::Graph;
using topology::LinkType;
using topology::NodeType;

std::string gbs(double bw) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  os << bw << " GB/s";
  return os.str();
}

int gpuLabel(const Report& r, int position) {
  if (r.system.graph.hostHashes().size() > 1) return position;
  return r.system.graph.node(r.result.gpus[position]).index;
}

namespace {

// Prints the node and, below it, the nodes its PCI links lead to that have not been printed yet (the PCI tree
// hangs from the CPUs this way); other links are shown as references.
void printNode(const Graph& g, int node, int parentNode, LinkType via, double bw, int depth, std::set<int>& seen,
               std::ostream& os) {
  std::string indent(2 * depth, ' ');
  os << indent << g.label(node);
  const auto& n = g.node(node);
  if (n.type == NodeType::kGpu) os << " sm" << n.sm;
  if (parentNode >= 0) os << "  [" << topology::linkTypeName(via) << " " << gbs(bw) << "]";
  if (n.type == NodeType::kCpu && !n.name.empty()) os << "  " << n.name;
  os << "\n";
  seen.insert(node);
  for (const auto& l : n.links) {
    if (l.to == parentNode) continue;
    // The tree follows PCI (and NIC -> NET) links down from the CPUs; NVLinks and other cross links are shown as
    // references to their far end.
    bool down = l.type == LinkType::kPci || l.type == LinkType::kNet;
    if (seen.count(l.to) || !down) {
      if (l.type != LinkType::kSys)
        os << indent << "  -> " << g.label(l.to) << "  [" << topology::linkTypeName(l.type) << " " << gbs(l.bw)
           << "]\n";
      continue;
    }
    if (g.node(l.to).type == NodeType::kCpu) continue;
    printNode(g, l.to, node, l.type, l.bw, depth + 1, seen, os);
  }
}

void printRings(const Report& r, const topology::SearchResult& res, const std::string& title, std::ostream& os) {
  os << "\n"
     << title << " (" << res.rings.size() << " channel(s), path type " << topology::pathTypeName(res.typeIntra)
     << (res.stitched ? ", in and out through NICs" : "") << ")\n";
  for (size_t c = 0; c < res.rings.size(); ++c) {
    const auto& ring = res.rings[c];
    os << "  " << (res.stitched ? "channel " : "ring ") << c << ": " << channelText(r, res, ring) << "  bandwidth "
       << gbs(ring.bw) << " (route alone " << gbs(ring.bottleneck) << ")\n";
  }
}

}  // namespace

void printText(const Report& r, std::ostream& os) {
  const Graph& g = r.system.graph;
  const auto& res = r.result;
  const auto devices = deviceRows(g);
  std::map<std::string, int> classOnly;
  for (const auto& d : devices)
    if (g.isClassOnlyDevice(d.node)) ++classOnly[d.kind];
  os << "Topology (" << r.system.source << "): " << g.hostHashes().size() << " host(s), "
     << g.ofType(NodeType::kCpu).size() << " NUMA node(s), " << res.gpus.size() << " GPU(s), "
     << g.ofType(NodeType::kNet).size() << " NIC port(s)";
  if (!classOnly.empty()) {
    os << "; listed by class code only:";
    const char* sep = " ";
    for (auto kind : {topology::PciKind::kGpu, topology::PciKind::kIbHca, topology::PciKind::kEthernet,
                      topology::PciKind::kNic, topology::PciKind::kNvSwitch, topology::PciKind::kOther}) {
      auto it = classOnly.find(topology::pciKindName(kind));
      if (it == classOnly.end()) continue;
      os << sep << it->second << " " << it->first;
      sep = ", ";
    }
  }
  os << "\n";
  if (!r.system.notes.empty()) {
    os << "\n";
    for (const auto& note : r.system.notes) os << "  " << note << "\n";
  }
  os << "\n";
  std::set<int> seen;
  for (int cpu : g.ofType(NodeType::kCpu)) printNode(g, cpu, -1, LinkType::kLoc, 0, 0, seen, os);
  for (int cpu : g.ofType(NodeType::kCpu))
    for (const auto& l : g.node(cpu).links)
      if (l.type == LinkType::kSys) os << g.label(cpu) << " -> " << g.label(l.to) << "  [SYS " << gbs(l.bw) << "]\n";
  for (int i = 0; i < g.size(); ++i)
    if (!seen.count(i)) printNode(g, i, -1, LinkType::kLoc, 0, 0, seen, os);

  if (!devices.empty()) {
    os << "\nDevices\n";
    for (const auto& d : devices) {
      os << "  " << std::left << std::setw(13) << d.kind << std::setw(14) << d.busId << std::setw(10) << d.pciClass
         << std::setw(22) << d.parent << "NUMA " << std::setw(3) << (d.numa >= 0 ? std::to_string(d.numa) : "-")
         << std::right;
      if (g.hostHashes().size() > 1) os << " host " << d.host;
      os << " " << d.what << "\n";
    }
  }

  if (!res.gpus.empty()) {
    // Path types between GPUs and from GPUs to NICs, as nvidia-smi topo -m prints them.
    auto nets = g.ofType(NodeType::kNet);
    os << "\nPaths (" << (g.hostHashes().size() > 1 ? "rank" : "dev") << ")\n       ";
    for (size_t b = 0; b < res.gpus.size(); ++b) os << std::setw(6) << ("GPU" + std::to_string(gpuLabel(r, b)));
    for (int n : nets) os << std::setw(6) << ("NIC" + std::to_string(g.node(n).index));
    os << "  NUMA\n";
    for (size_t a = 0; a < res.gpus.size(); ++a) {
      os << std::setw(7) << std::left << ("GPU" + std::to_string(gpuLabel(r, a))) << std::right;
      for (int b : res.gpus) os << std::setw(6) << topology::pathTypeName(r.paths.get(res.gpus[a], b).type);
      for (int n : nets) os << std::setw(6) << topology::pathTypeName(r.paths.get(res.gpus[a], n).type);
      int cpu = g.localCpu(res.gpus[a]);
      os << "  " << (cpu >= 0 ? std::to_string(g.node(cpu).index) : "-") << "\n";
    }
    if (!nets.empty()) {
      os << "\nGPU-NIC pairs (the closest NIC port of each GPU)\n";
      for (size_t a = 0; a < res.gpuNics.size(); ++a) {
        const auto& pair = res.gpuNics[a];
        os << "  GPU" << gpuLabel(r, a) << " -> ";
        if (pair.net < 0)
          os << "none\n";
        else
          os << g.label(pair.net) << "  " << topology::pathTypeName(pair.type) << " " << gbs(pair.bw) << "\n";
      }
    }
    printRings(r, res, "Rings", os);
    if (r.multiNode != nullptr)
      printRings(r, *r.multiNode, "Multi-node channels, on each host of a multi-node job", os);
    os << "\nTrees (bandwidth " << gbs(res.treeBw) << ")\n";
    for (int t = 0; t < 2; ++t) {
      os << "  tree " << t << ": root " << gpuLabel(r, res.trees.root[t]) << ", parent of each:";
      for (size_t i = 0; i < res.gpus.size(); ++i) {
        int p = res.trees.parent[t][i];
        os << " " << gpuLabel(r, i) << "<-" << (p < 0 ? std::string("root") : std::to_string(gpuLabel(r, p)));
      }
      os << "\n";
    }
    os << "\nTuning inputs\n";
    for (const auto& line : res.tuning.describe()) os << "  " << line << "\n";
  } else {
    if (classOnly.count("GPU"))
      os << "\n"
         << classOnly["GPU"]
         << " GPU(s) listed by class code only: --assume gpu=MODEL[,nvswitch] previews the rings and trees.\n";
    // A host communicator with two ranks per NUMA node: what the collectives would use here.
    std::vector<topology::RankPlace> places;
    for (int cpu : g.ofType(NodeType::kCpu)) {
      topology::RankPlace p;
      p.hostHash = g.hostHashes()[g.node(cpu).host];
      p.numaNode = g.node(cpu).index;
      places.push_back(p);
      places.push_back(p);
    }
    os << "\nNo GPUs. Host communicator with two ranks per NUMA node:\n  ring:";
    auto rings = topology::searchHostRings(places, 1);
    for (int rank : rings[0]) os << " " << rank << "(NUMA " << places[rank].numaNode << ")";
    os << "\n";
    double nic = 0;
    for (int net : g.ofType(NodeType::kNet))
      nic = std::max(nic, g.node(net).links.empty() ? 0 : g.node(net).links[0].bw);
    for (const auto& line : topology::hostTuningInputs(places, 2, nic).describe()) os << "  " << line << "\n";
  }
}

}  // namespace chorus::tools
