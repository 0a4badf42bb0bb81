#include "core/topo_setup.h"

#include <sched.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "base/error.h"
#include "base/logging.h"
#include "base/params.h"
#include "collectives/conn_key.h"
#include "topology/cpu_cache.h"
#include "topology/host_order.h"
#include "topology/paths.h"
#include "topology/search.h"
#include "topology/system.h"

namespace chorus::core {

namespace {

// Channels the communicator prepares rings for; tuning uses up to this many. By default 2 for host ranks (one
// rank per core gains nothing from more) and, for ranks on a GPU, as many as keep the blocks of the ranks that
// share a GPU in one process within kDevBlockBudget (a channel is one CUDA block, and one block moves a small
// share of the GPU's memory bandwidth). However set, never more than that budget allows on a GPU: kernels that
// cannot all be resident wait for one another forever.
int channelCount(int minChannels, int maxChannels, int ranksPerDevice) {
  int n = static_cast<int>(param::Nchannels());
  if (maxChannels > 0) n = n > 0 ? std::min(n, maxChannels) : maxChannels;
  const int resident = ranksPerDevice > 0 ? std::max(1, coll::kDevBlockBudget / ranksPerDevice) : coll::kMaxChannels;
  if (n <= 0) n = ranksPerDevice > 0 ? coll::kMaxChannels : 2;
  n = std::max(n, minChannels);
  return std::clamp(n, 1, std::min(coll::kMaxChannels, resident));
}

// The most ranks that one process runs on one GPU (0 when no rank is on a GPU); computed from every rank's
// information, so the same on every rank.
int ranksPerDevice(const std::vector<transport::PeerInfo>& peers) {
  std::map<std::pair<uint64_t, int32_t>, int> count;
  int most = 0;
  for (const transport::PeerInfo& p : peers) {
    if (p.device >= 0) most = std::max(most, ++count[{p.processId, p.device}]);
  }
  return most;
}

// CHORUS_TOPO_FILE / CHORUS_TOPO_DUMP_FILE / CHORUS_GRAPH_DUMP_FILE: the first rank of each process loads or
// detects the machine's topology, writes the requested files, and logs what it found. Host communicators order
// their rings from where ranks live (searchHostRings); the machine graph matters to GPU rings.
void loadMachineTopologyIfAsked(const std::vector<transport::PeerInfo>& peers, int rank) {
  if (param::TopoFile().empty() && param::TopoDumpFile().empty() && param::GraphDumpFile().empty()) return;
  static std::once_flag once;
  std::call_once(once, [&] {
    try {
      topology::System system = topology::loadSystem();  // writes CHORUS_TOPO_DUMP_FILE
      topology::Paths paths(system.graph);
      // A job over several hosts enters and leaves this host through its NICs (NCCL's ring graph on each node), so
      // the dumped channels name the NIC of each channel.
      std::set<uint64_t> hosts;
      for (const auto& peer : peers) hosts.insert(peer.hostHash);
      topology::SearchOptions options;
      options.viaNets = hosts.size() > 1;
      topology::SearchResult result = topology::searchChannels(system.graph, paths, options);
      topology::dumpGraphIfRequested(system.graph, result);
      CHORUS_LOG_INFO(kGraph, "rank ", rank, ": topology from ", system.source);
    } catch (const Error& e) {
      CHORUS_LOG_WARN(kGraph, "rank ", rank, ": topology: ", e.what());
    }
  });
}

// The last-level cache of the CPU this process runs on when it first asks, read once (topology/cpu_cache.h). Ranks
// move between CPUs unless bound; the CPUs of one host have last-level caches of one size on the machines measured.
size_t processCacheBytes() {
  static const size_t bytes = [] {
    const int cpu = sched_getcpu();
    const size_t b = topology::lastLevelCacheBytes(cpu >= 0 ? cpu : 0);
    CHORUS_LOG_INFO(kInit, "last-level cache of CPU ", cpu, ": ", b >> 10, " KiB", b == 0 ? " (unknown)" : "");
    return b;
  }();
  return bytes;
}

}  // namespace

size_t streamMinBytes(size_t cacheBytes) {
  const int64_t forced = param::StreamMinBytes();
  if (forced == 0) return SIZE_MAX;
  if (forced > 0) return static_cast<size_t>(forced);
  // Where sysfs says nothing: the 32 MiB L3 of the machine the rule was measured on (docs/performance.md, session
  // 20: 2 ranks sharing it, where plain stores won below 16 MiB and streaming ones above). Half the cache on other
  // machines is that measurement scaled, not a measurement of theirs. Dividing it among the ranks of the host was
  // measured and not kept (session 21: at 4 ranks, 8 MiB instead of 16 made the 8 MiB all-gather and the in-place
  // rows slower). An operation of less than a core's own cache (1 MiB of L2 here) gains nothing from streaming.
  const size_t cache = cacheBytes > 0 ? cacheBytes : size_t{32} << 20;
  return std::max(cache / 2, size_t{1} << 20);
}

size_t slotStreamMinBytes(size_t outputMinBytes) {
  const int64_t forced = param::SlotStreamMinBytes();
  if (forced == 0) return SIZE_MAX;
  if (forced > 0) return static_cast<size_t>(forced);
  return outputMinBytes;
}

size_t slotStoresAdaptFrom() {
  // Below a core's own cache (1 MiB of L2 here) a slot's lines stay in cache on either kind of placement.
  return param::SlotStreamMinBytes() == -1 ? size_t{1} << 20 : SIZE_MAX;
}

coll::TopoView buildTopoView(const std::vector<transport::PeerInfo>& peers, int rank, int minChannels,
                             int maxChannels) {
  loadMachineTopologyIfAsked(peers, rank);
  std::vector<topology::RankPlace> places(peers.size());
  std::set<uint64_t> hosts, procs;
  for (size_t r = 0; r < peers.size(); ++r) {
    places[r].hostHash = peers[r].hostHash;
    places[r].numaNode = peers[r].numaNode;
    places[r].device = peers[r].device;
    places[r].busId = peers[r].busId;
    hosts.insert(peers[r].hostHash);
    procs.insert(peers[r].processId);
  }
  coll::TopoView v;
  v.nHosts = static_cast<int>(hosts.size());
  v.allSameProcess = procs.size() == 1;
  v.ranksPerDevice = ranksPerDevice(peers);
  v.streamMinBytes = streamMinBytes(processCacheBytes());
  v.slotStreamMinBytes = slotStreamMinBytes(v.streamMinBytes);
  v.slotStoresAdaptFrom = slotStoresAdaptFrom();
  v.rings = topology::searchHostRings(places, channelCount(minChannels, maxChannels, v.ranksPerDevice));
  CHORUS_ENFORCE(!v.rings.empty(), "topology search returned no ring");
  for (const auto& ring : v.rings) {
    auto it = std::find(ring.begin(), ring.end(), rank);
    CHORUS_ENFORCE(it != ring.end() && ring.size() == peers.size(), "ring does not cover every rank");
    v.ringIndex.push_back(static_cast<int>(it - ring.begin()));
  }
  topology::TreePair trees = topology::searchHostTrees(places);
  for (int t = 0; t < 2; ++t) {
    v.trees[t].root = trees.root[t];
    v.trees[t].parent = trees.parent[t];
    v.trees[t].children = trees.children[t];
  }
  if (logEnabled(LogLevel::kInfo, kGraph)) {
    for (size_t c = 0; c < v.rings.size(); ++c) {
      std::string order;
      for (int r : v.rings[c]) order += " " + std::to_string(r);
      CHORUS_LOG_INFO(kGraph, "channel ", c, " ring:", order);
    }
  }
  return v;
}

}  // namespace chorus::core
