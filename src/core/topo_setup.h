// Computes a communicator's rings and trees from where its ranks live (src/topology's host search).
#pragma once

#include <vector>

#include "collectives/topo_view.h"
#include "transport/peer_info.h"

namespace chorus::core {

// Rings for every channel the communicator may use (CHORUS_NCHANNELS within the config's minChannels and
// maxChannels, 0: none given), and the double binary tree, as seen by `rank`.
coll::TopoView buildTopoView(const std::vector<transport::PeerInfo>& peers, int rank, int minChannels, int maxChannels);

}  // namespace chorus::core
