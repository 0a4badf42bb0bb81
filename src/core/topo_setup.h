// Computes a communicator's rings and trees from where its ranks live (src/topology's host search).
#pragma once

#include "collectives/topo_view.h"

namespace chorus::core {

class Comm;

// Rings for every channel the communicator may use, and the double binary tree.
coll::TopoView buildTopoView(const Comm& comm);

}  // namespace chorus::core
