// The topology the library uses: CHORUS_TOPO_FILE when set (an NCCL_TOPO_FILE loads unchanged), detection
// otherwise; written to CHORUS_TOPO_DUMP_FILE when set. The searched channels go to CHORUS_GRAPH_DUMP_FILE.
#pragma once

#include <memory>
#include <string>

#include "topology/graph.h"
#include "topology/paths.h"
#include "topology/search.h"
#include "topology/xml_tree.h"

namespace chorus::topology {

struct System {
  std::string source;  // the file it was loaded from, or "detected"
  XmlElement xml;      // NCCL topology XML of the system
  Graph graph;
};

// Detects the running machine (detect.h) and builds its graph.
System detectSystem();
// Loads a topology file. With checkMachine, a GPU or NIC bus id of this host that the running machine does not
// have is a warning, and the machine is detected instead (a file from another machine).
System loadSystemFile(const std::string& path, bool checkMachine);
// CHORUS_TOPO_FILE or detection, then CHORUS_TOPO_DUMP_FILE.
System loadSystem();

// NCCL's graph XML of the searched channels: <graphs version="1"><graph id pattern nchannels ...><channel>
// <net dev/><gpu dev/>...</channel></graph></graphs>. Graph 0 is the ring (pattern 4), graph 1 the trees
// (pattern 1, balanced tree: one chain per channel, both trees).
XmlElement graphXml(const Graph& graph, const SearchResult& result);
// Writes graphXml to CHORUS_GRAPH_DUMP_FILE when it is set.
void dumpGraphIfRequested(const Graph& graph, const SearchResult& result);

}  // namespace chorus::topology
