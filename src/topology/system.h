// The topology the library uses: CHORUS_TOPO_FILE merged with this machine's detection as NCCL merges an
// NCCL_TOPO_FILE (topo_merge.h), or detection alone; written to CHORUS_TOPO_DUMP_FILE when set. The searched
// channels go to CHORUS_GRAPH_DUMP_FILE.
//
// Detection is passed in as a function returning NCCL topology XML, so that tests inject what a machine would
// detect (a fake detector fed from data) and everything above stays a function of data.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "topology/detect.h"
#include "topology/graph.h"
#include "topology/paths.h"
#include "topology/search.h"
#include "topology/xml_tree.h"

namespace chorus::topology {

struct System {
  std::string source;  // the file it was loaded from, or "detected"
  XmlElement xml;      // NCCL topology XML of the system
  Graph graph;
  std::vector<std::string> notes;  // what merging with detection filled, added or kept without detection
};

// What detection found: detectTopology() on a real machine, canned XML in tests.
using Detector = std::function<XmlElement()>;

// Detects the running machine and builds its graph.
System detectSystem(const Detector& detect = detectTopology);
// Loads a topology file as it is (chorus-topo --topo-file inspects files of other machines this way).
System loadSystemFile(const std::string& path);
// Loads a topology file and merges this machine's detection into it (topo_merge.h). Devices detected but not in
// the file, and devices of the file this machine lacks, are warnings; the notes list every device merged.
System mergeSystemFile(const std::string& path, const Detector& detect, uint64_t localHostHash);
System mergeSystemFile(const std::string& path, const Detector& detect = detectTopology);
// CHORUS_TOPO_FILE merged with detection, or detection alone, then CHORUS_TOPO_DUMP_FILE.
System loadSystem(const Detector& detect = detectTopology);

// NCCL's graph XML of the searched channels: <graphs version="1"><graph id pattern nchannels ...><channel>
// <net dev/><gpu dev/>...</channel></graph></graphs>. Graph 0 is the ring (pattern 4), graph 1 the trees
// (pattern 1, balanced tree: one chain per channel, both trees).
XmlElement graphXml(const Graph& graph, const SearchResult& result);
// Writes graphXml to CHORUS_GRAPH_DUMP_FILE when it is set.
void dumpGraphIfRequested(const Graph& graph, const SearchResult& result);

}  // namespace chorus::topology
