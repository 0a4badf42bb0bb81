#include "parallel/grid.h"

#include <sstream>

namespace chorus::train {

Grid::Grid(Comm& world, int dp, int tp, int pp, int virtualStages, Device& device)
    : world_(world), dp_(dp), tp_(tp), pp_(pp) {
  const int r = world.rank();
  auto split = [&](int color, int key) { return world.splitOnDevice(color, key, device); };
  t_ = r % tp;
  p_ = (r / tp) % pp;
  d_ = r / (tp * pp);
  // Every split is collective over the world: each rank calls them all, in the same order.
  dpComm_ = split(p_ * tp + t_, d_);
  tpComm_ = split(d_ * pp + p_, t_);
  if (tp == 1) tpComm_.reset();
  const bool ends = p_ == 0 || p_ == pp - 1;
  auto tied = split(pp > 1 && ends ? t_ : -1, d_ * pp + p_);
  tiedComm_ = std::move(tied);
  // Link e joins stage e and e+1 of the same (d, t); in its two-rank communicators stage e is rank 0.
  actLink_.resize(pp > 1 ? pp - 1 : 0);
  gradLink_.resize(actLink_.size());
  for (int e = 0; e + 1 < pp; ++e) {
    const bool member = p_ == e || p_ == e + 1;
    actLink_[e] = split(member ? d_ * tp + t_ : -1, p_);
    gradLink_[e] = split(member ? d_ * tp + t_ : -1, p_);
  }
  if (virtualStages > 1 && pp > 1) {
    // The interleaved schedule's wrap: the last stage's chunk v feeds the first stage's chunk v+1. The last
    // stage is rank 0 of these communicators.
    const bool member = p_ == 0 || p_ == pp - 1;
    wrapAct_ = split(member ? d_ * tp + t_ : -1, p_ == pp - 1 ? 0 : 1);
    wrapGrad_ = split(member ? d_ * tp + t_ : -1, p_ == pp - 1 ? 0 : 1);
  }
}

Grid::~Grid() {
  wrapGrad_.reset();
  wrapAct_.reset();
  for (size_t e = 0; e < actLink_.size(); ++e) {
    gradLink_[e].reset();
    actLink_[e].reset();
  }
  tiedComm_.reset();
  tpComm_.reset();
  dpComm_.reset();
}

void Grid::abandon() {
  for (auto* links : {&actLink_, &gradLink_})
    for (auto& c : *links)
      if (c) c->abandon();
  for (auto* c : {dpComm_.get(), tpComm_.get(), tiedComm_.get(), wrapAct_.get(), wrapGrad_.get()})
    if (c) c->abandon();
}

std::vector<std::pair<std::string, Comm*>> Grid::groups() {
  std::vector<std::pair<std::string, Comm*>> out = {{"data-parallel", dpComm_.get()}};
  if (tpComm_) out.emplace_back("tensor-parallel", tpComm_.get());
  if (tiedComm_) out.emplace_back("tied-embedding", tiedComm_.get());
  for (auto [name, c] : {std::pair<const char*, Comm*>{"pipeline activations out", activationsTo(false)},
                         {"pipeline gradients out", gradientsTo(false)},
                         {"pipeline activations out (wrap)", activationsTo(true)},
                         {"pipeline gradients out (wrap)", gradientsTo(true)}})
    if (c) out.emplace_back(name, c);
  return out;
}

std::string Grid::describe() const {
  std::ostringstream os;
  os << "grid: dp " << dp_ << " x pp " << pp_ << " x tp " << tp_ << " (world rank = (dp * " << pp_ << " + pp) * " << tp_
     << " + tp)";
  for (int d = 0; d < dp_; ++d) {
    os << "\n  dp " << d << ":";
    for (int p = 0; p < pp_; ++p) {
      os << "  stage " << p << " [";
      for (int t = 0; t < tp_; ++t) os << (t ? " " : "") << worldRank(d, p, t, pp_, tp_);
      os << "]";
    }
  }
  return os.str();
}

}  // namespace chorus::train
