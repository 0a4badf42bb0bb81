// Computes a communicator's rings and trees from where its ranks live (src/topology's host search).
#pragma once

#include <cstddef>
#include <vector>

#include "collectives/topo_view.h"
#include "transport/peer_info.h"

namespace chorus::core {

// Rings for every channel the communicator may use (CHORUS_NCHANNELS within the config's minChannels and
// maxChannels, 0: none given), and the double binary tree, as seen by `rank`.
coll::TopoView buildTopoView(const std::vector<transport::PeerInfo>& peers, int rank, int minChannels, int maxChannels);

// The bytes an operation touches on a rank from which its outputs are written with streaming stores
// (coll::TopoView::streamMinBytes): CHORUS_STREAM_MIN_BYTES where set (0: never), else half of `cacheBytes` (the
// last-level cache of the CPU this process started on, topology/cpu_cache.h; 32 MiB where sysfs does not say), at
// least 1 MiB.
size_t streamMinBytes(size_t cacheBytes);

// The bytes an operation touches on a rank from which its copies into the peers' FIFO slots stream
// (coll::TopoView::slotStreamMinBytes): CHORUS_SLOT_STREAM_MIN_BYTES where set (0: never), else `outputMinBytes`.
size_t slotStreamMinBytes(size_t outputMinBytes);

// The footprint from which, up to the slots' streaming threshold, their store kind is chosen by measured times
// (coll::TopoView::slotStoresAdaptFrom): 1 MiB where CHORUS_SLOT_STREAM_MIN_BYTES is left at -1; SIZE_MAX (never)
// where it is set.
size_t slotStoresAdaptFrom();

}  // namespace chorus::core
