#include "topology/system.h"

#include <unistd.h>

#include <cstdio>
#include <sstream>

#include "base/host_id.h"
#include "base/logging.h"
#include "base/params.h"
#include "topology/detect.h"
#include "topology/topo_xml.h"

namespace chorus::topology {
namespace {

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string fixed(double v) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  os << v;
  return os.str();
}

// Bus ids of this host's GPUs and NICs that /sys/bus/pci/devices does not know.
std::vector<std::string> missingBusIds(const Graph& g) {
  int host = 0;
  for (size_t h = 0; h < g.hostHashes().size(); ++h)
    if (g.hostHashes()[h] == hostHash()) host = static_cast<int>(h);
  std::vector<std::string> missing;
  for (int i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    if (n.host != host || n.busId < 0 || (n.type != NodeType::kGpu && n.type != NodeType::kNic)) continue;
    std::string id = formatBusId(n.busId);
    if (access(("/sys/bus/pci/devices/" + id).c_str(), F_OK) != 0) missing.push_back(id);
  }
  return missing;
}

}  // namespace

XmlElement detectTopology() {
  detail::XmlBuilder b;
  detail::detectCpus(b);
  detail::detectGpus(b);
  detail::detectIbNics(b);
  detail::detectEthernetNics(b);
  std::string hash = hex(hostHash());
  for (auto& c : b.system().children)
    if (c.name == "cpu") c.set("host_hash", hash);
  return b.system();
}

System detectSystem() {
  System s;
  s.source = "detected";
  s.xml = detectTopology();
  s.graph = graphFromXml(s.xml, "detected topology");
  return s;
}

System loadSystemFile(const std::string& path, bool checkMachine) {
  System s;
  s.source = path;
  s.xml = readXmlFile(path);
  s.graph = graphFromXml(s.xml, path);
  if (checkMachine) {
    auto missing = missingBusIds(s.graph);
    if (!missing.empty()) {
      CHORUS_LOG_WARN(kGraph, "topology file ", path, " names bus id ", missing.front(), " (and ", missing.size() - 1,
                      " more) that this machine does not have; detecting the topology instead");
      return detectSystem();
    }
  }
  CHORUS_LOG_INFO(kGraph, "topology loaded from ", path);
  return s;
}

System loadSystem() {
  std::string file = param::TopoFile();
  System s = file.empty() ? detectSystem() : loadSystemFile(file, true);
  std::string dump = param::TopoDumpFile();
  if (!dump.empty()) {
    writeXmlFile(s.xml, dump);
    CHORUS_LOG_INFO(kGraph, "topology written to ", dump);
  }
  return s;
}

XmlElement graphXml(const Graph& graph, const SearchResult& r) {
  XmlElement root;
  root.name = "graphs";
  root.set("version", "1");
  auto header = [&](XmlElement& g, int id, int pattern, int nChannels, double speed) {
    g.set("id", std::to_string(id));
    g.set("pattern", std::to_string(pattern));
    g.set("crossnic", "0");
    g.set("nchannels", std::to_string(nChannels));
    g.set("speedintra", fixed(speed));
    g.set("speedinter", fixed(r.stitched ? speed : 0));
    g.set("latencyinter", "0");
    g.set("typeintra", pathTypeName(r.typeIntra));
    g.set("typeinter", pathTypeName(r.stitched ? r.typeInter : PathType::kPix));
    g.set("samechannels", "0");
  };
  auto gpu = [&](XmlElement& ch, int pos) { ch.add("gpu").set("dev", std::to_string(graph.node(r.gpus[pos]).index)); };
  auto net = [&](XmlElement& ch, int node) { ch.add("net").set("dev", std::to_string(graph.node(node).index)); };
  XmlElement& ring = root.add("graph");
  double minBw = r.rings.empty() ? 0 : r.rings.front().bw;
  for (const auto& c : r.rings) minBw = std::min(minBw, c.bw);
  header(ring, 0, 4, static_cast<int>(r.rings.size()), minBw);
  for (const auto& c : r.rings) {
    XmlElement& ch = ring.add("channel");
    size_t h = 0;
    for (size_t i = 0; i < c.order.size(); ++i) {
      bool first = i == 0 || graph.node(r.gpus[c.order[i]]).host != graph.node(r.gpus[c.order[i - 1]]).host;
      bool last =
          i + 1 == c.order.size() || graph.node(r.gpus[c.order[i]]).host != graph.node(r.gpus[c.order[i + 1]]).host;
      if (first && h < c.nets.size()) net(ch, c.nets[h].first);
      gpu(ch, c.order[i]);
      if (last && h < c.nets.size()) net(ch, c.nets[h++].second);
    }
  }
  XmlElement& tree = root.add("graph");
  header(tree, 1, 1, r.rings.empty() ? 0 : 2, r.treeBw);
  for (int t = 0; t < 2 && !r.rings.empty(); ++t) {
    // Breadth-first from the root: the order NCCL's tree graph lists a channel's GPUs.
    XmlElement& ch = tree.add("channel");
    std::vector<int> queue{r.trees.root[t]};
    for (size_t i = 0; i < queue.size(); ++i) {
      gpu(ch, queue[i]);
      for (int c : r.trees.children[t][queue[i]]) queue.push_back(c);
    }
  }
  return root;
}

void dumpGraphIfRequested(const Graph& graph, const SearchResult& result) {
  std::string path = param::GraphDumpFile();
  if (path.empty()) return;
  writeXmlFile(graphXml(graph, result), path);
  CHORUS_LOG_INFO(kGraph, "search graphs written to ", path);
}

}  // namespace chorus::topology
