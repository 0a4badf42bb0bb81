// chorus-topo: prints the detected (or loaded) topology, the path types between GPUs, and the rings and trees the
// search finds.
//
//   chorus-topo [--topo-file F] [--json] [--dot] [--png OUT.png]
//
// --topo-file (or CHORUS_TOPO_FILE) inspects an NCCL-format topology XML file as it is, even one from another
// machine. CHORUS_TOPO_DUMP_FILE and CHORUS_GRAPH_DUMP_FILE write the topology and the searched channels.
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"chorus-topo: the topology Chorus sees, its GPU paths, rings and trees"};
  std::string topoFile, png;
  bool json = false, dot = false;
  app.add_option("--topo-file", topoFile, "NCCL-format topology XML to load instead of detecting this machine");
  app.add_flag("--json", json, "print one JSON document");
  app.add_flag("--dot", dot, "print the topology as Graphviz DOT");
  app.add_option("--png", png, "render the topology to this PNG file with Graphviz");
  CLI11_PARSE(app, argc, argv);
  using namespace chorus;
  try {
    if (topoFile.empty()) topoFile = param::TopoFile();
    topology::System system = topoFile.empty() ? topology::detectSystem() : topology::loadSystemFile(topoFile, false);
    std::string dump = param::TopoDumpFile();
    if (!dump.empty()) topology::writeXmlFile(system.xml, dump);
    topology::Paths paths(system.graph);
    topology::SearchResult result = topology::searchChannels(system.graph, paths);
    topology::dumpGraphIfRequested(system.graph, result);
    tools::Report report{system, paths, result};
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
