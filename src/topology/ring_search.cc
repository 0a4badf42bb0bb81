#include "topology/ring_search.h"

#include <algorithm>

namespace chorus::topology {
namespace {

class Dfs {
 public:
  Dfs(const Paths& paths, LinkBudget& budget, const RingRequest& req)
      : paths_(paths), budget_(budget), req_(req), used_(req.gpus.size(), false) {}

  std::vector<int> search() {
    if (req_.gpus.empty()) return {};
    if (req_.startNet < 0) {
      // A ring is a cycle: it may start anywhere, so it starts at the first GPU.
      used_[0] = true;
      order_.push_back(req_.gpus[0]);
      return step(req_.gpus[0]) ? order_ : std::vector<int>{};
    }
    order_.push_back(req_.startNet);
    if (req_.firstGpu < 0) return step(req_.startNet) ? order_ : std::vector<int>{};
    const int first = req_.gpus[req_.firstGpu];
    if (!tryHop(req_.startNet, first, PathType::kNet)) return {};
    used_[req_.firstGpu] = true;
    order_.push_back(first);
    if (step(first)) return order_;
    undoHop(req_.startNet, first);
    return {};
  }

 private:
  bool tryHop(int from, int to, PathType limit) {
    const Path& p = paths_.get(from, to);
    if (p.type == PathType::kDis || p.type > limit || !budget_.fits(p, req_.speed)) return false;
    budget_.take(p, req_.speed);
    return true;
  }
  void undoHop(int from, int to) { budget_.give(paths_.get(from, to), req_.speed); }

  bool close(int cur) {
    if (req_.startNet < 0) {
      if (req_.gpus.size() == 1) return true;
      return tryHop(cur, order_.front(), req_.typeIntra);
    }
    for (int net : req_.endNets) {
      if (tryHop(cur, net, PathType::kNet)) {
        order_.push_back(net);
        return true;
      }
    }
    return false;
  }

  bool step(int cur) {
    const size_t target = req_.gpus.size() + (req_.startNet >= 0 ? 1 : 0);
    if (order_.size() == target) return close(cur);
    if (++steps_ > req_.maxSteps) return false;
    const bool fromNet = req_.startNet >= 0 && order_.size() == 1;
    const bool lastHop = order_.size() + 1 == target;
    for (size_t i : candidates(cur)) {
      // The GPU the chain must leave by comes last.
      if (req_.lastGpu >= 0 && (static_cast<int>(i) == req_.lastGpu) != lastHop) continue;
      int g = req_.gpus[i];
      if (!tryHop(cur, g, fromNet ? PathType::kNet : req_.typeIntra)) continue;
      used_[i] = true;
      order_.push_back(g);
      if (step(g)) return true;
      order_.pop_back();
      used_[i] = false;
      undoHop(cur, g);
      if (steps_ > req_.maxSteps) return false;
    }
    return false;
  }

  // Unused GPUs: the previous channel's successor first, then by path type, bandwidth and PCI order.
  std::vector<size_t> candidates(int cur) const {
    std::vector<size_t> out;
    for (size_t i = 0; i < req_.gpus.size(); ++i)
      if (!used_[i]) out.push_back(i);
    int replayNext = -1;
    if (req_.replay != nullptr) {
      const auto& r = *req_.replay;
      auto it = std::find(r.begin(), r.end(), cur);
      if (it != r.end() && it + 1 != r.end()) replayNext = *(it + 1);
    }
    std::stable_sort(out.begin(), out.end(), [&](size_t a, size_t b) {
      int ga = req_.gpus[a], gb = req_.gpus[b];
      if ((ga == replayNext) != (gb == replayNext)) return ga == replayNext;
      const Path& pa = paths_.get(cur, ga);
      const Path& pb = paths_.get(cur, gb);
      if (pa.type != pb.type) return pa.type < pb.type;
      if (pa.bw != pb.bw) return pa.bw > pb.bw;
      return false;
    });
    return out;
  }

  const Paths& paths_;
  LinkBudget& budget_;
  const RingRequest& req_;
  std::vector<bool> used_;
  std::vector<int> order_;
  long steps_ = 0;
};

}  // namespace

std::vector<int> findRing(const Paths& paths, LinkBudget& budget, const RingRequest& request) {
  return Dfs(paths, budget, request).search();
}

std::vector<Hop> orderHops(const Paths& paths, const std::vector<int>& order, bool closed) {
  std::vector<Hop> hops;
  if (order.size() < 2) return hops;
  size_t n = closed ? order.size() : order.size() - 1;
  for (size_t i = 0; i < n; ++i) {
    const Path& p = paths.get(order[i], order[(i + 1) % order.size()]);
    hops.insert(hops.end(), p.hops.begin(), p.hops.end());
  }
  return hops;
}

}  // namespace chorus::topology
