#include "topology/system.h"

#include <cstdio>
#include <sstream>

#include "base/host_id.h"
#include "base/logging.h"
#include "base/params.h"
#include "topology/detect.h"
#include "topology/topo_merge.h"
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

System detectSystem(const Detector& detect) {
  System s;
  s.source = "detected";
  s.xml = detect();
  s.graph = graphFromXml(s.xml, "detected topology");
  return s;
}

System loadSystemFile(const std::string& path) {
  System s;
  s.source = path;
  s.xml = readXmlFile(path);
  s.graph = graphFromXml(s.xml, path);
  return s;
}

System mergeSystemFile(const std::string& path, const Detector& detect, uint64_t localHostHash) {
  System s;
  s.source = path + " + detected";
  s.xml = readXmlFile(path);
  MergeReport report = mergeDetected(s.xml, detect(), localHostHash);
  s.graph = graphFromXml(s.xml, path);
  for (const auto& e : report.filled)
    CHORUS_LOG_INFO(kGraph, "topology file ", path, ": ", e.kind, " ", e.busId, " described by detection: ", e.detail);
  for (const auto& e : report.added)
    CHORUS_LOG_WARN(kGraph, "topology file ", path, " does not list the ", e.kind, " detected at ", e.busId, "; ",
                    e.detail);
  if (!report.missing.empty()) {
    std::string list;
    for (size_t i = 0; i < report.missing.size() && i < 4; ++i)
      list += (i ? ", " : "") + report.missing[i].kind + " " + report.missing[i].busId;
    if (report.missing.size() > 4) list += ", ...";
    CHORUS_LOG_WARN(kGraph, "topology file ", path, " lists ", report.missing.size(),
                    " device(s) or port(s) this machine does not have (", list,
                    "); devices stay in the graph as PCI devices of their class");
  }
  for (const auto& n : report.notes) CHORUS_LOG_INFO(kGraph, "topology file ", path, ": ", n);
  s.notes = report.describe();
  CHORUS_LOG_INFO(kGraph, "topology loaded from ", path, " and merged with detection");
  return s;
}

System mergeSystemFile(const std::string& path, const Detector& detect) {
  return mergeSystemFile(path, detect, hostHash());
}

System loadSystem(const Detector& detect) {
  std::string file = param::TopoFile();
  System s = file.empty() ? detectSystem(detect) : mergeSystemFile(file, detect);
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
