// chorus-topo: prints the detected (or loaded) topology, its devices, the path types between GPUs, the GPU-NIC
// pairs, and the rings and trees the search finds.
//
//   chorus-topo [--topo-file F [--merge]] [--assume gpu=MODEL[,nvswitch]] [--assume nic=MODEL] [--multi-node]
//               [--json] [--dot] [--png OUT.png]
//
// --topo-file (or CHORUS_TOPO_FILE) inspects an NCCL-format topology XML file as it is, even one from another
// machine; --merge merges it with this machine's detection as the library does. --assume fills the GPUs and NICs
// a file lists by class code only from a table of models (topology/assume.h), to preview a machine you do not
// have. --multi-node searches as each host of a multi-node job does (through the NICs); without it, a host with
// NICs also shows those channels. CHORUS_TOPO_DUMP_FILE and CHORUS_GRAPH_DUMP_FILE write the topology and the
// searched channels.
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "base/error.h"
#include "base/params.h"
#include "report.h"
#include "topology/assume.h"
#include "topology/topo_xml.h"
#include "topology/xml_tree.h"

namespace {

// Renders DOT text to a PNG with Graphviz's dot (Debian package graphviz); false when dot fails or is missing.
bool renderPng(const std::string& dot, const std::string& out) {
  char tmp[] = "/tmp/chorus-topo-XXXXXX";
  int fd = mkstemp(tmp);
  if (fd < 0) return false;
  bool ok = write(fd, dot.data(), dot.size()) == static_cast<ssize_t>(dot.size());
  close(fd);
  if (ok) {
    pid_t pid = fork();
    if (pid == 0) {
      execlp("dot", "dot", "-Tpng", "-o", out.c_str(), tmp, static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    ok = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  unlink(tmp);
  return ok;
}

std::string modelList() {
  std::string s = "GPU models:";
  for (const auto& m : chorus::topology::gpuModels()) s += std::string(" ") + m.name;
  s += "; NIC models:";
  for (const auto& m : chorus::topology::nicModels()) s += std::string(" ") + m.name;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"chorus-topo: the topology Chorus sees, its devices, GPU paths, GPU-NIC pairs, rings and trees"};
  std::string topoFile, png;
  std::vector<std::string> assume;
  bool json = false, dot = false, merge = false, multiNode = false;
  app.add_option("--topo-file", topoFile, "NCCL-format topology XML to load instead of detecting this machine");
  app.add_flag("--merge", merge, "merge the topology file with this machine's detection, as the library does");
  app.add_option(
         "--assume", assume,
         "gpu=MODEL[,nvswitch] or nic=MODEL: fill the devices the file lists by class code only (" + modelList() + ")")
      ->take_all();
  app.add_flag("--multi-node", multiNode, "search as each host of a multi-node job does: through the NICs");
  app.add_flag("--json", json, "print one JSON document");
  app.add_flag("--dot", dot, "print the topology as Graphviz DOT");
  app.add_option("--png", png, "render the topology to this PNG file with Graphviz");
  CLI11_PARSE(app, argc, argv);
  using namespace chorus;
  try {
    topology::Assumptions assumptions;
    for (const auto& value : assume) topology::parseAssumption(value, &assumptions);
    if (topoFile.empty()) topoFile = param::TopoFile();
    CHORUS_CHECK_ARG(!merge || !topoFile.empty(), "--merge needs a topology file (--topo-file or CHORUS_TOPO_FILE)");
    topology::System system = topoFile.empty() ? topology::detectSystem()
                              : merge          ? topology::mergeSystemFile(topoFile)
                                               : topology::loadSystemFile(topoFile);
    if (!assumptions.empty()) {
      for (const auto& line : topology::applyAssumptions(system.xml, assumptions)) system.notes.push_back(line);
      system.graph = topology::graphFromXml(system.xml, system.source);
      system.source += " + assumed";
    }
    std::string dump = param::TopoDumpFile();
    if (!dump.empty()) topology::writeXmlFile(system.xml, dump);
    topology::Paths paths(system.graph);
    topology::SearchOptions options;
    options.viaNets = multiNode;
    topology::SearchResult result = topology::searchChannels(system.graph, paths, options);
    topology::dumpGraphIfRequested(system.graph, result);
    // One host with GPUs and NICs: also the channels of a multi-node job, whose NICs the user wants to see.
    topology::SearchResult netResult;
    bool showNet = !result.stitched && !result.gpus.empty() && !system.graph.ofType(topology::NodeType::kNet).empty();
    if (showNet) {
      options.viaNets = true;
      netResult = topology::searchChannels(system.graph, paths, options);
    }
    tools::Report report{system, paths, result, showNet ? &netResult : nullptr};
    if (json) tools::printJson(report, std::cout);
    if (dot) tools::printDot(report, std::cout);
    if (!png.empty()) {
      std::ostringstream os;
      tools::printDot(report, os);
      if (!renderPng(os.str(), png)) {
        std::cerr << "chorus-topo: rendering " << png << " with Graphviz's dot failed (apt-get install graphviz)\n";
        return 1;
      }
      if (!json && !dot) std::cout << "wrote " << png << "\n";
    }
    if (!json && !dot && png.empty()) tools::printText(report, std::cout);
  } catch (const Error& e) {
    std::cerr << "chorus-topo: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
