// chorus-topo's views of a system and its searched channels: indented text, one JSON document, Graphviz.
#pragma once

#include <ostream>
#include <string>

#include "topology/paths.h"
#include "topology/search.h"
#include "topology/system.h"

namespace chorus::tools {

struct Report {
  const topology::System& system;
  const topology::Paths& paths;
  const topology::SearchResult& result;
};

void printText(const Report& r, std::ostream& os);
void printJson(const Report& r, std::ostream& os);
void printDot(const Report& r, std::ostream& os);

// What a ring's order and a tree's entries print as: the dev on one host, the rank (position in the GPU list)
// on several.
int gpuLabel(const Report& r, int position);
std::string gbs(double bw);

}  // namespace chorus::tools
