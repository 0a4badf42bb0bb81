#include "topology/search.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "base/logging.h"
#include "topology/bandwidths.h"
#include "topology/link_budget.h"
#include "topology/ring_search.h"

namespace chorus::topology {
namespace {

// Speeds per channel tried, high to low (NCCL's per-arch arrays, merged and extended for NVSwitch systems).
constexpr double kSpeeds[] = {400, 370, 300, 240, 200, 150, 120, 100, 80, 60, 50,  40, 30,  24, 20,  18,   15,
                              12,  11,  10,  9,   8,   7,   6,   5,   4,  3,  2.4, 2,  1.2, 1,  0.5, 0.24, 0.12};
constexpr long kTotalSteps = 1L << 19;

struct Candidate {
  std::vector<std::vector<int>> orders;  // node orders (ring: GPUs; stitched: per host chains joined)
  std::vector<std::vector<std::pair<int, int>>> nets;
  std::vector<std::vector<Hop>> hops;
  double speed = 0;
  double total() const { return orders.size() * speed; }
};

// Better: clearly more bandwidth, or about the same with at least two channels where the best has one.
bool better(const Candidate& c, const Candidate& best) {
  if (c.orders.empty()) return false;
  if (best.orders.empty() || c.total() > best.total() * 1.05) return true;
  return c.total() >= best.total() * 0.95 && best.orders.size() < 2 && c.orders.size() >= 2;
}

class Searcher {
 public:
  Searcher(const Graph& g, const Paths& p, const SearchOptions& o) : g_(g), p_(p), opt_(o) {}

  SearchResult run() {
    SearchResult r;
    r.gpus = g_.ofType(NodeType::kGpu);
    r.nHosts = std::max<int>(1, static_cast<int>(g_.hostHashes().size()));
    if (r.gpus.empty()) return r;
    r.gpuNics = gpuNicAffinity(g_, p_);
    for (const GpuNic& pair : r.gpuNics) pairOf_[pair.gpu] = pair;
    std::map<int, int> position;
    for (size_t i = 0; i < r.gpus.size(); ++i) position[r.gpus[i]] = static_cast<int>(i);
    bool connected = true;
    for (int a : r.gpus)
      for (int b : r.gpus) connected = connected && p_.get(a, b).type != PathType::kDis;
    const bool viaNets = opt_.viaNets && !g_.ofType(NodeType::kNet).empty();
    Candidate best;
    if (connected && !viaNets) {
      best = searchRing(r.gpus, &r.typeIntra);
    } else {
      r.stitched = true;
      best = searchStitched(r.gpus, &r.typeIntra);
    }
    if (best.orders.empty()) best = fallback(r.gpus, connected);
    r.speed = best.speed;
    std::vector<double> shares = fairShares(g_, best.hops);
    for (size_t c = 0; c < best.orders.size(); ++c) {
      RingChannel ch;
      for (int node : best.orders[c])
        if (g_.node(node).type == NodeType::kGpu) ch.order.push_back(position[node]);
      ch.nets = c < best.nets.size() ? best.nets[c] : std::vector<std::pair<int, int>>{};
      ch.hops = best.hops[c];
      ch.bw = shares[c];
      ch.bottleneck = aloneBottleneck(ch.hops);
      r.rings.push_back(std::move(ch));
    }
    if (r.stitched) r.typeInter = interType(r);
    buildTrees(&r);
    r.tuning = TuningInputs(summary(r));
    CHORUS_LOG_INFO(kGraph, "search: ", r.rings.size(), " ring channel(s) of ", r.gpus.size(), " GPU(s), type ",
                    pathTypeName(r.typeIntra), ", speed ", r.speed, " GB/s per channel");
    return r;
  }

 private:
  // NCCL's typeInter: the worst path between a GPU and the NIC its host's chain enters or leaves by (PIX when
  // every chain starts and ends at a NIC on its GPU's own switch). NCCL's graph files name it with a path type
  // (LOC .. SYS), which CHORUS_GRAPH_DUMP_FILE writes.
  PathType interType(const SearchResult& r) const {
    PathType worst = PathType::kLoc;
    for (const RingChannel& ch : r.rings) {
      size_t h = 0;
      for (size_t i = 0; i < ch.order.size() && h < ch.nets.size(); ++i) {
        const int gpu = r.gpus[ch.order[i]];
        const bool first = i == 0 || g_.node(r.gpus[ch.order[i - 1]]).host != g_.node(gpu).host;
        const bool last = i + 1 == ch.order.size() || g_.node(r.gpus[ch.order[i + 1]]).host != g_.node(gpu).host;
        if (first) worst = std::max(worst, p_.get(gpu, ch.nets[h].first).type);
        if (last) worst = std::max(worst, p_.get(gpu, ch.nets[h++].second).type);
      }
    }
    return worst;
  }

  double aloneBottleneck(const std::vector<Hop>& hops) const {
    std::map<std::pair<int, int>, int> uses;
    for (const Hop& h : hops) ++uses[{h.from, h.link}];
    double bw = kLocBw;
    for (const auto& [key, n] : uses) bw = std::min(bw, g_.node(key.first).links[key.second].bw / n);
    return bw;
  }

  std::vector<PathType> typesBetween(const std::vector<int>& gpus) const {
    std::vector<PathType> types;
    for (int a : gpus)
      for (int b : gpus)
        if (a != b && p_.get(a, b).type != PathType::kDis) types.push_back(p_.get(a, b).type);
    if (types.empty()) types.push_back(PathType::kLoc);
    std::sort(types.begin(), types.end());
    types.erase(std::unique(types.begin(), types.end()), types.end());
    return types;
  }

  double maxBw(const std::vector<int>& gpus) const {
    double bw = 0;
    for (int a : gpus)
      for (int b : gpus)
        if (a != b) bw = std::max(bw, p_.get(a, b).bw);
    return gpus.size() == 1 ? kLocBw : bw;
  }

  Candidate searchRing(const std::vector<int>& gpus, PathType* typeOut) {
    if (gpus.size() == 1) {
      Candidate c;
      c.orders.push_back(gpus);
      c.hops.emplace_back();
      c.speed = kLocBw;
      *typeOut = PathType::kLoc;
      return c;
    }
    double top = maxBw(gpus);
    for (PathType type : typesBetween(gpus)) {
      Candidate best;
      for (double speed : kSpeeds) {
        if (speed > top + 1e-9) continue;
        if (!best.orders.empty() && speed * opt_.maxChannels < best.total() * 0.95) break;
        LinkBudget budget(g_);
        Candidate c;
        c.speed = speed;
        while (static_cast<int>(c.orders.size()) < opt_.maxChannels && steps_ < kTotalSteps) {
          RingRequest req;
          req.gpus = gpus;
          req.typeIntra = type;
          req.speed = speed;
          req.replay = c.orders.empty() ? nullptr : &c.orders.back();
          std::vector<int> order = findRing(p_, budget, req);
          steps_ += gpus.size();
          if (order.empty()) break;
          c.hops.push_back(orderHops(p_, order, true));
          c.orders.push_back(std::move(order));
        }
        if (better(c, best)) best = std::move(c);
      }
      if (!best.orders.empty()) {
        *typeOut = type;
        return best;
      }
    }
    return {};
  }

  // A host's GPUs and, per NIC port that is among the closest of some GPU (in NET dev order), those GPUs: the GPUs
  // paired with it first, then the others as close to it, each in dev order. Ports no GPU is close to stay unused,
  // as NCCL's ring graphs use only the NICs local to the GPUs.
  struct HostNics {
    std::vector<int> gpus;                    // GPU nodes in dev order
    std::vector<int> nets;                    // NET nodes some GPU is closest to, in dev order
    std::vector<std::vector<size_t>> gpusOf;  // per such NET, indices into gpus
  };

  HostNics hostNics(const std::vector<int>& gpus) const {
    HostNics h;
    h.gpus = gpus;
    for (int net : g_.ofType(NodeType::kNet)) {
      std::vector<size_t> paired, close;
      for (size_t i = 0; i < gpus.size(); ++i) {
        const GpuNic& pair = pairOf_.at(gpus[i]);
        if (pair.net == net)
          paired.push_back(i);
        else if (std::find(pair.closest.begin(), pair.closest.end(), net) != pair.closest.end())
          close.push_back(i);
      }
      if (paired.empty() && close.empty()) continue;
      paired.insert(paired.end(), close.begin(), close.end());
      h.nets.push_back(net);
      h.gpusOf.push_back(std::move(paired));
    }
    return h;
  }

  // Channel ch's chain through one host: enters by the ch-th paired NIC and its GPU (rotating among the GPUs that
  // share it), leaves by the NIC closest to the last GPU. Of the chains that fit, one per exit NIC, the one that
  // uses the fewest links wins (a two-socket host's chain then crosses the CPU interconnect once), the entry NIC
  // first on a tie (rail aligned, as NCCL's crossNic=2 prefers), else the next NICs in turn. Empty when none fits.
  std::vector<int> hostChain(const HostNics& h, int ch, PathType type, double speed, LinkBudget& budget) {
    const size_t nNets = h.nets.size();
    const size_t in = static_cast<size_t>(ch) % nNets;
    const size_t turn = static_cast<size_t>(ch) / nNets;
    const auto& firsts = h.gpusOf[in];
    const size_t first = firsts[turn % firsts.size()];
    RingRequest req;
    req.gpus = h.gpus;
    req.startNet = h.nets[in];
    req.firstGpu = static_cast<int>(first);
    req.typeIntra = type;
    req.speed = speed;
    // Entering must fit before any order is tried.
    if (!budget.fits(p_.get(req.startNet, h.gpus[first]), speed)) return {};
    auto chainLinks = [&](const std::vector<int>& chain, bool take) {
      for (size_t i = 0; i + 1 < chain.size(); ++i) {
        const Path& p = p_.get(chain[i], chain[i + 1]);
        take ? budget.take(p, speed) : budget.give(p, speed);
      }
    };
    std::vector<int> best;
    size_t bestLinks = 0;
    for (size_t k = 0; k < nNets && steps_ < kTotalSteps; ++k) {
      const size_t out = (in + k) % nNets;
      for (size_t j = 0; j < h.gpusOf[out].size(); ++j) {
        size_t last = h.gpusOf[out][(j + turn) % h.gpusOf[out].size()];
        if (last == first && h.gpus.size() > 1) continue;
        // Leaving must fit too (the search would otherwise try every order of the GPUs between to learn it).
        if (!budget.fits(p_.get(h.gpus[last], h.nets[out]), speed)) continue;
        req.lastGpu = static_cast<int>(last);
        req.endNets = {h.nets[out]};
        std::vector<int> chain = findRing(p_, budget, req);
        steps_ += h.gpus.size();
        if (chain.empty()) continue;
        chainLinks(chain, false);  // compared with the other exits on the same budget
        size_t links = orderHops(p_, chain, false).size();
        if (best.empty() || links < bestLinks) {
          best = std::move(chain);
          bestLinks = links;
        }
        break;  // one chain per exit NIC
      }
    }
    if (!best.empty()) chainLinks(best, true);
    return best;
  }

  // One chain per host and channel: NET -> the host's GPUs -> NET; host h's chain sends to host h+1's.
  Candidate searchStitched(const std::vector<int>& gpus, PathType* typeOut) {
    int nHosts = static_cast<int>(g_.hostHashes().size());
    std::vector<std::vector<int>> hostGpus(std::max(nHosts, 1));
    for (int gpu : gpus) hostGpus[g_.node(gpu).host].push_back(gpu);
    std::vector<HostNics> hosts;
    std::vector<PathType> types;
    for (const auto& hg : hostGpus) {
      if (hg.empty()) continue;
      hosts.push_back(hostNics(hg));
      if (hosts.back().nets.empty()) return {};  // a host without NICs: the fallback joins the hosts in dev order
      auto t = typesBetween(hg);
      types.insert(types.end(), t.begin(), t.end());
    }
    // No channel can be faster than the slowest host's fastest paired NIC.
    double top = kLocBw;
    for (const HostNics& h : hosts) {
      double netBw = 0;
      for (int net : h.nets) netBw = std::max(netBw, g_.node(net).links.empty() ? 0 : g_.node(net).links[0].bw);
      top = std::min(top, netBw);
    }
    std::sort(types.begin(), types.end());
    types.erase(std::unique(types.begin(), types.end()), types.end());
    for (PathType type : types) {
      Candidate best;
      for (double speed : kSpeeds) {
        if (speed > top + 1e-9) continue;
        if (!best.orders.empty() && speed * opt_.maxChannels < best.total() * 0.95) break;
        LinkBudget budget(g_);
        Candidate c;
        c.speed = speed;
        for (int ch = 0; ch < opt_.maxChannels && steps_ < kTotalSteps; ++ch) {
          std::vector<int> joined;
          std::vector<std::pair<int, int>> nets;
          std::vector<Hop> hops;
          bool ok = true;
          for (const HostNics& h : hosts) {
            std::vector<int> chain = hostChain(h, ch, type, speed, budget);
            if (chain.empty()) {
              ok = false;
              break;
            }
            nets.emplace_back(chain.front(), chain.back());
            auto hh = orderHops(p_, chain, false);
            hops.insert(hops.end(), hh.begin(), hh.end());
            joined.insert(joined.end(), chain.begin(), chain.end());
          }
          // A channel that failed on some host leaves the speed it took on the others in the budget; this only
          // makes later channels of this candidate more conservative.
          if (!ok) break;
          c.orders.push_back(std::move(joined));
          c.nets.push_back(std::move(nets));
          c.hops.push_back(std::move(hops));
        }
        if (better(c, best)) best = std::move(c);
      }
      if (!best.orders.empty()) {
        *typeOut = type;
        return best;
      }
    }
    return {};
  }

  // One channel in PCI order (NCCL's last resort), at whatever its route carries.
  Candidate fallback(const std::vector<int>& gpus, bool connected) {
    Candidate c;
    c.orders.push_back(gpus);
    c.hops.push_back(connected ? orderHops(p_, gpus, true) : std::vector<Hop>{});
    c.speed = aloneBottleneck(c.hops.back());
    return c;
  }

  void buildTrees(SearchResult* r) const {
    // Local order: the first ring's order restricted to each host, so tree edges follow ring neighbours.
    std::vector<std::vector<int>> hosts(r->nHosts);
    for (int pos : r->rings.front().order) hosts[g_.node(r->gpus[pos]).host].push_back(pos);
    hosts.erase(std::remove_if(hosts.begin(), hosts.end(), [](const auto& h) { return h.empty(); }), hosts.end());
    r->trees = treesFromHostGroups(hosts, static_cast<int>(r->gpus.size()));
    double bw = r->gpus.size() == 1 ? kLocBw : 1e30;
    for (int t = 0; t < 2; ++t) {
      for (size_t c = 0; c < r->gpus.size(); ++c) {
        int parent = r->trees.parent[t][c];
        if (parent < 0) continue;
        const Path& p = p_.get(r->gpus[c], r->gpus[parent]);
        bw = std::min(bw, p.type == PathType::kDis ? netBw(r->gpus[c], r->gpus[parent]) : p.bw);
      }
    }
    r->treeBw = bw;
  }

  // Between hosts: the slower of the two hosts' fastest NICs (10 Gb/s when a host has none).
  double netBw(int a, int b) const {
    double bw = 1e30;
    for (int gpu : {a, b}) {
      double best = 0;
      for (int net : g_.ofType(NodeType::kNet))
        if (g_.node(net).host == g_.node(gpu).host) best = std::max(best, p_.get(gpu, net).bw);
      bw = std::min(bw, best > 0 ? best : 1.25);
    }
    return bw;
  }

  SearchSummary summary(const SearchResult& r) const {
    SearchSummary s;
    s.nRanks = static_cast<int>(r.gpus.size());
    s.nHosts = r.nHosts;
    s.nChannels = static_cast<int>(r.rings.size());
    double ring = kLocBw;
    for (const auto& ch : r.rings) ring = std::min(ring, ch.bw);
    s.ringBwGBs = ring;
    s.interBwGBs = r.stitched ? ring : 0;
    s.treeBwGBs = std::min(ring, r.treeBw);
    // Simple-protocol hardware latencies of NCCL's model.
    s.intraLatUs = r.typeIntra <= PathType::kNvb ? 3.4 : 5.7;
    s.interLatUs = 14.0;
    return s;
  }

  const Graph& g_;
  const Paths& p_;
  SearchOptions opt_;
  long steps_ = 0;
  std::map<int, GpuNic> pairOf_;  // GPU node -> its closest NICs
};

}  // namespace

SearchResult searchChannels(const Graph& graph, const Paths& paths, const SearchOptions& options) {
  return Searcher(graph, paths, options).run();
}

}  // namespace chorus::topology
