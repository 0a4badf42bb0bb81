#include "topology/link_budget.h"

#include <algorithm>
#include <limits>
#include <map>

#include "topology/bandwidths.h"

namespace chorus::topology {
namespace {
constexpr double kTolerance = 1e-6;
}

LinkBudget::LinkBudget(const Graph& graph) : graph_(&graph), left_(graph.size()) {
  for (int i = 0; i < graph.size(); ++i)
    for (const Link& l : graph.node(i).links) left_[i].push_back(l.bw);
}

bool LinkBudget::fits(const Path& path, double bw) const {
  // A path may use the same link twice only in degenerate graphs; count uses to be exact.
  for (size_t i = 0; i < path.hops.size(); ++i) {
    const Hop& h = path.hops[i];
    int uses = 0;
    for (const Hop& o : path.hops) uses += (o.from == h.from && o.link == h.link);
    if (left_[h.from][h.link] + kTolerance < bw * uses) return false;
  }
  return true;
}

double LinkBudget::capacity(const Hop& hop) const {
  return graph_->node(hop.from).links[hop.link].bw;
}

void LinkBudget::add(const Path& path, double bw) {
  for (const Hop& h : path.hops) left_[h.from][h.link] += bw;
}

std::vector<double> fairShares(const Graph& graph, const std::vector<std::vector<Hop>>& uses) {
  const size_t n = uses.size();
  std::vector<double> share(n, 0);
  std::vector<bool> frozen(n, false);
  // Per link: how many times each channel crosses it.
  std::map<std::pair<int, int>, std::vector<int>> users;
  for (size_t c = 0; c < n; ++c) {
    if (uses[c].empty()) {
      share[c] = kLocBw;
      frozen[c] = true;
    }
    for (const Hop& h : uses[c]) users[{h.from, h.link}].push_back(static_cast<int>(c));
  }
  std::map<std::pair<int, int>, double> left;
  for (const auto& [key, list] : users) left[key] = graph.node(key.first).links[key.second].bw;
  // Progressive filling: raise every unfrozen channel by the largest equal step no link refuses, then freeze
  // the channels of the links that are full.
  for (size_t round = 0; round <= n; ++round) {
    double step = std::numeric_limits<double>::infinity();
    for (const auto& [key, list] : users) {
      int active = 0;
      for (int c : list) active += !frozen[c];
      if (active > 0) step = std::min(step, left[key] / active);
    }
    if (step == std::numeric_limits<double>::infinity()) break;
    for (auto& [key, list] : users)
      for (int c : list)
        if (!frozen[c]) left[key] -= step;
    for (size_t c = 0; c < n; ++c)
      if (!frozen[c]) share[c] += step;
    for (const auto& [key, list] : users) {
      if (left[key] > kTolerance * std::max(1.0, graph.node(key.first).links[key.second].bw)) continue;
      for (int c : list) frozen[c] = true;
    }
  }
  return share;
}

}  // namespace chorus::topology
