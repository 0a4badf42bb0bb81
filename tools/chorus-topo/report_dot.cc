#include "report.h"

namespace chorus::tools {

using topology::NodeType;

void printDot(const Report& r, std::ostream& os) {
  const auto& g = r.system.graph;
  static const char* kColors[] = {"palegreen", "lightgrey", "gold", "lightblue", "plum", "pink"};
  os << "graph topology {\n  rankdir=TB;\n  node [shape=box, style=filled, fontname=\"Helvetica\"];\n";
  for (int i = 0; i < g.size(); ++i)
    os << "  n" << i << " [label=\"" << g.label(i) << "\", fillcolor=" << kColors[static_cast<int>(g.node(i).type)]
       << "];\n";
  // One edge per physical link (the two directions have the same type and usually the same bandwidth).
  for (int i = 0; i < g.size(); ++i) {
    for (const auto& l : g.node(i).links) {
      if (l.to < i) {
        bool reverse = false;
        for (const auto& b : g.node(l.to).links) reverse = reverse || (b.to == i && b.type == l.type);
        if (reverse) continue;
      }
      const char* style = l.type == topology::LinkType::kNvl ? "bold" : "solid";
      os << "  n" << i << " -- n" << l.to << " [label=\"" << topology::linkTypeName(l.type) << " " << gbs(l.bw)
         << "\", style=" << style << "];\n";
    }
  }
  os << "}\n";
}

}  // namespace chorus::tools
