// Fuzzes the topology XML reader, graph builder, paths and search, GPU-NIC affinity, --assume and merging with
// detection: any input either builds a graph or throws chorus::Error; nothing crashes, hangs or leaks.
//
// Build and run (about 30 s):
//   cmake -S . -B build-fuzz -G Ninja -DCHORUS_BUILD_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang
//   ninja -C build-fuzz fuzz_topo_xml
//   build-fuzz/bin/fuzz_topo_xml -max_total_time=30 -max_len=4096 <work dir> tests/fuzz/corpus/fuzz_topo_xml
// (tests/fuzz/CMakeLists.txt builds it from src/base and src/topology only, all with coverage instrumentation.)
// Last run: 520,098 inputs in 121 s from the corpus (-max_total_time=120), no crash (ASan + UBSan).
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "topology/assume.h"
#include "topology/nic_affinity.h"
#include "topology/paths.h"
#include "topology/search.h"
#include "topology/system.h"
#include "topology/topo_merge.h"
#include "topology/topo_xml.h"
#include "topology/xml_tree.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace chorus::topology;
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    XmlElement xml = parseXml(text, "fuzz.xml");
    Graph graph = graphFromXml(xml, "fuzz.xml");
    // Keep the search small enough for the fuzzer's pace; the parser is the target.
    if (graph.size() > 64) return 0;
    Paths paths(graph);
    SearchOptions options;
    options.maxChannels = 2;
    SearchResult result = searchChannels(graph, paths, options);
    (void)writeXml(graphXml(graph, result));
    (void)writeXml(xml);
    options.viaNets = true;
    (void)searchChannels(graph, paths, options);
    (void)gpuNicAffinity(graph, paths);
    // The input as a class-code file previewed with --assume, and merged with itself as the detected machine.
    XmlElement assumed = xml;
    Assumptions a;
    parseAssumption("gpu=h100-sxm5,nvswitch", &a);
    parseAssumption("nic=ib-ndr400", &a);
    (void)applyAssumptions(assumed, a);
    (void)graphFromXml(assumed, "assumed");
    XmlElement merged = xml;
    (void)mergeDetected(merged, xml, 0).describe();
    (void)graphFromXml(merged, "merged");
  } catch (const chorus::Error&) {
  }
  return 0;
}
