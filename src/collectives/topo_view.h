// The parts of the topology the executor needs: per channel a ring (and this rank's place in it), and the
// two trees of the double binary tree. Computed once per communicator by the core from src/topology.
#pragma once

#include <vector>

namespace chorus::coll {

struct TreeView {
  int root = 0;
  std::vector<int> parent;                 // parent[r]: parent rank of r, -1 at the root
  std::vector<std::vector<int>> children;  // children[r]: child ranks of r
};

struct TopoView {
  std::vector<std::vector<int>> rings;  // rings[c][i]: rank at position i of channel c's ring
  std::vector<int> ringIndex;           // ringIndex[c]: this rank's position in rings[c]
  TreeView trees[2];                    // a double binary tree: every rank is a leaf in one of them
  int nHosts = 1;
  bool allSameProcess = false;
};

}  // namespace chorus::coll
