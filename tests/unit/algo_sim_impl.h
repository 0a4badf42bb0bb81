// The definitions of algo_sim.h (header-only: tests/unit builds one executable per *_test.cc).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <sstream>
#include <string>
#include <vector>

#include "collectives/algo/direct.h"
#include "collectives/algo/ring_allgather.h"
#include "collectives/algo/ring_allreduce.h"
#include "collectives/algo/ring_broadcast.h"
#include "collectives/algo/ring_reduce.h"
#include "collectives/algo/ring_reducescatter.h"
#include "collectives/algo/tree_allreduce.h"
#include "collectives/algo/tree_broadcast.h"
#include "collectives/algo/tree_reduce.h"
#include "collectives/pattern/ring.h"
#include "unit/algo_sim.h"
#include "unit/step_recorder.h"

namespace chorus::coll::sim {

inline const char* collName(Coll c) {
  switch (c) {
    case Coll::kAllReduce: return "AllReduce";
    case Coll::kAllGather: return "AllGather";
    case Coll::kReduceScatter: return "ReduceScatter";
    case Coll::kBroadcast: return "Broadcast";
    case Coll::kReduce: return "Reduce";
  }
  return "?";
}

inline const char* algoName(Algo a) {
  return a == Algo::kRing ? "ring" : a == Algo::kTree ? "tree" : "direct";
}

inline Tree heapTree(const std::vector<int>& order, int arity) {
  const int n = static_cast<int>(order.size());
  Tree t;
  t.parent.assign(n, -1);
  t.children.assign(n, {});
  for (int i = 1; i < n; ++i) {
    const int parent = order[(i - 1) / arity];
    t.parent[order[i]] = parent;
    t.children[parent].push_back(order[i]);
  }
  return t;
}

inline std::vector<Tree> doubleBinaryTree(int nranks) {
  std::vector<int> forward(nranks), mirrored(nranks);
  for (int i = 0; i < nranks; ++i) {
    forward[i] = i;
    mirrored[i] = nranks - 1 - i;
  }
  return {heapTree(forward, 2), heapTree(mirrored, 2)};
}

inline std::string describe(const SimConfig& cfg) {
  std::ostringstream os;
  os << algoName(cfg.algo) << " " << collName(cfg.coll) << " nranks=" << cfg.nranks << " root=" << cfg.root
     << " count=" << cfg.count << " chunk=" << cfg.chunkElems << " grain=" << cfg.grainElems
     << " nChannels=" << cfg.nChannels << " slots=" << cfg.slots << (cfg.inPlace ? " in-place" : "");
  return os.str();
}

namespace detail {

// One symbolic element.
struct Sym {
  int64_t index = -1;             // the input element every contribution came from; -1: never written, -2: mixed
  uint64_t ranks = 0;             // the ranks that contributed
  uint32_t contribs = 0;          // contributions (more than popcount(ranks) when one was counted twice)
  uint32_t premuls = 0;           // premultiplier applications
  uint32_t postOps = 0;           // post-divisor applications
  bool reducedAfterPost = false;  // a post-divided value was reduced again
};

inline Sym inputSym(int rank, size_t index) {
  Sym s;
  s.index = static_cast<int64_t>(index);
  s.ranks = uint64_t{1} << rank;
  s.contribs = 1;
  return s;
}

inline void reduceInto(Sym& acc, const Sym& in) {
  if (acc.index != in.index || acc.index < 0 || in.index < 0) acc.index = -2;
  if (acc.postOps > 0 || in.postOps > 0) acc.reducedAfterPost = true;
  acc.reducedAfterPost = acc.reducedAfterPost || in.reducedAfterPost;
  acc.ranks |= in.ranks;
  acc.contribs += in.contribs;
  acc.premuls += in.premuls;
  acc.postOps += in.postOps;
}

inline bool operator==(const Sym& a, const Sym& b) {
  return a.index == b.index && a.ranks == b.ranks && a.contribs == b.contribs && a.premuls == b.premuls &&
         a.postOps == b.postOps && a.reducedAfterPost == b.reducedAfterPost;
}

inline std::string symString(const Sym& s) {
  std::ostringstream os;
  os << "{index=" << s.index << " ranks=0x" << std::hex << s.ranks << std::dec << " contribs=" << s.contribs
     << " premuls=" << s.premuls << " postOps=" << s.postOps << (s.reducedAfterPost ? " reduced-after-post" : "")
     << "}";
  return os.str();
}

struct Message {
  std::vector<Sym> data;
  size_t senderStep = 0;
};

// Collects problems, keeping the first few in full.
struct Problems {
  std::ostringstream text;
  size_t count = 0;
  void add(const std::string& what) {
    if (count < 12) text << "  " << what << "\n";
    ++count;
  }
};

inline size_t inputSize(const SimConfig& cfg) {
  return cfg.coll == Coll::kReduceScatter ? cfg.count * static_cast<size_t>(cfg.nranks) : cfg.count;
}

inline size_t outputSize(const SimConfig& cfg) {
  return cfg.coll == Coll::kAllGather ? cfg.count * static_cast<size_t>(cfg.nranks) : cfg.count;
}

// The output element that input element `in` of `rank` aliases when the operation runs in place.
inline size_t aliasOfInput(const SimConfig& cfg, int rank, size_t in) {
  switch (cfg.coll) {
    case Coll::kAllGather: return static_cast<size_t>(rank) * cfg.count + in;
    case Coll::kReduceScatter: return in - static_cast<size_t>(rank) * cfg.count;  // only the own block aliases
    default: return in;
  }
}

inline bool inputAliased(const SimConfig& cfg, int rank, size_t in) {
  if (!cfg.inPlace) return false;
  if (cfg.coll == Coll::kReduceScatter) {
    const size_t first = static_cast<size_t>(rank) * cfg.count;
    return in >= first && in < first + cfg.count;
  }
  return true;
}

inline CollArgs argsFor(const SimConfig& cfg, int channel, int rank) {
  CollArgs a;
  a.count = cfg.count;
  a.nranks = cfg.nranks;
  a.rank = rank;
  a.root = cfg.root;
  a.channel = channel;
  a.nChannels = cfg.nChannels;
  a.chunkElems = cfg.chunkElems;
  a.grainElems = cfg.grainElems;
  if (cfg.algo == Algo::kRing) {
    const std::vector<int>& ring = cfg.rings[channel];
    a.ring = ring.data();
    a.ringIndex = ringPositionOf(ring.data(), cfg.nranks, rank);
  } else if (cfg.algo == Algo::kTree) {
    const Tree& t = cfg.trees[channel];
    a.treeParent = t.parent[rank];
    a.treeNChildren = static_cast<int>(t.children[rank].size());
  }
  return a;
}

// The direct algorithms' peer set (primitives.h) over recorders that share one log.
struct RecordingPeers {
  std::vector<Step>* log;
  int rank;
  bool ownInputCopy;  // the executor reads this rank's own contribution from a copy of the input
  StepRecorder peer(int r) const {
    if (r != rank) return StepRecorder(log, {r}, {r});
    StepRecorder self(log, {}, {});
    if (ownInputCopy) self.readCopyOfInput();
    return self;
  }
};

}  // namespace detail

inline std::vector<Step> recordSchedule(const SimConfig& cfg, int channel, int rank) {
  std::vector<Step> log;
  const CollArgs a = detail::argsFor(cfg, channel, rank);
  if (cfg.algo == Algo::kDirect) {
    const bool reduces = cfg.coll == Coll::kAllReduce || cfg.coll == Coll::kReduceScatter ||
                         (cfg.coll == Coll::kReduce && rank == cfg.root);
    detail::RecordingPeers d{&log, rank, cfg.inPlace && reduces && rank > 0};
    switch (cfg.coll) {
      case Coll::kAllReduce: runDirectAllReduce(d, a); break;
      case Coll::kAllGather: runDirectAllGather(d, a); break;
      case Coll::kReduceScatter: runDirectReduceScatter(d, a); break;
      case Coll::kBroadcast: runDirectBroadcast(d, a); break;
      case Coll::kReduce: runDirectReduce(d, a); break;
    }
  } else if (cfg.algo == Algo::kRing) {
    const std::vector<int>& ring = cfg.rings[channel];
    const int prev = ringPrevRank(ring.data(), a.ringIndex, cfg.nranks);
    const int next = ringNextRank(ring.data(), a.ringIndex, cfg.nranks);
    StepRecorder p(&log, {prev}, {next});
    switch (cfg.coll) {
      case Coll::kAllReduce: runRingAllReduce(p, a); break;
      case Coll::kAllGather: runRingAllGather(p, a); break;
      case Coll::kReduceScatter: runRingReduceScatter(p, a); break;
      case Coll::kBroadcast: runRingBroadcast(p, a); break;
      case Coll::kReduce: runRingReduce(p, a); break;
    }
  } else {
    const Tree& t = cfg.trees[channel];
    const std::vector<int>& kids = t.children[rank];
    const int parent = t.parent[rank];
    const int nParent = parent >= 0 ? 1 : 0;
    StepRecorder up(&log, kids.data(), static_cast<int>(kids.size()), &parent, nParent);
    StepRecorder down(&log, &parent, nParent, kids.data(), static_cast<int>(kids.size()));
    switch (cfg.coll) {
      case Coll::kAllReduce: runTreeAllReduce(up, down, a); break;
      case Coll::kBroadcast: runTreeBroadcast(down, a); break;
      case Coll::kReduce: runTreeReduce(up, a); break;
      case Coll::kAllGather:
      case Coll::kReduceScatter: break;  // no tree variant
    }
  }
  return log;
}

namespace detail {

// Runs one channel's schedules together. out/written are per rank, shared by the channels.
inline void simulateChannel(const SimConfig& cfg, int channel, std::vector<std::vector<Sym>>& out,
                            std::vector<std::vector<uint32_t>>& written, Problems& problems, size_t& stepsRun) {
  const int n = cfg.nranks;
  const size_t inSize = inputSize(cfg);
  const size_t outSize = outputSize(cfg);
  std::vector<std::vector<Step>> sched(n);
  for (int r = 0; r < n; ++r) {
    sched[r] = recordSchedule(cfg, channel, r);
    if (cfg.mutate) cfg.mutate(channel, r, sched[r]);
  }
  std::vector<size_t> pc(n, 0);
  std::vector<std::deque<Message>> edges(static_cast<size_t>(n) * n);  // edges[from * n + to]
  auto edge = [&](int from, int to) -> std::deque<Message>& { return edges[static_cast<size_t>(from) * n + to]; };
  auto where = [&](int r, size_t i) {
    std::ostringstream os;
    os << "channel " << channel << " rank " << r << " step " << i << " (" << stepKindName(sched[r][i].kind)
       << " n=" << sched[r][i].n << ")";
    return os.str();
  };

  auto canRun = [&](int r, const Step& s) {
    const StepTraits t = stepTraits(s.kind);
    if (t.recvs) {
      for (int i = 0; i < s.nRecvPeers; ++i) {
        if (edge(s.recvPeers[i], r).empty()) return false;
      }
    }
    if (t.sends) {
      for (int i = 0; i < s.nSendPeers; ++i) {
        if (edge(r, s.sendPeers[i]).size() >= cfg.slots) return false;
      }
    }
    return true;
  };

  auto execute = [&](int r, size_t stepIndex) {
    const Step& s = sched[r][stepIndex];
    const StepTraits t = stepTraits(s.kind);
    if (s.n == 0) problems.add(where(r, stepIndex) + ": a call with n == 0");
    if (t.recvs && s.nRecvPeers == 0) problems.add(where(r, stepIndex) + ": receives with no recv peer");
    if (t.sends && s.nSendPeers == 0) problems.add(where(r, stepIndex) + ": sends with no send peer");
    if (t.recvs && !t.reduces && s.nRecvPeers > 1)
      problems.add(where(r, stepIndex) + ": copies what it receives from several peers");
    std::vector<Sym> v(s.n);
    if (t.readsInput) {
      if (s.inOff + s.n > inSize) {
        problems.add(where(r, stepIndex) + ": reads input past its end");
      } else {
        for (size_t i = 0; i < s.n; ++i) {
          const size_t in = s.inOff + i;
          if (!s.inputCopy && inputAliased(cfg, r, in) && written[r][aliasOfInput(cfg, r, in)] > 0) {
            problems.add(where(r, stepIndex) + ": in place, reads input element " + std::to_string(in) +
                         " after its output alias was written");
          }
          v[i] = inputSym(r, in);
          v[i].premuls = 1;
        }
      }
    }
    if (t.readsOutput) {
      if (s.outOff + s.n > outSize) {
        problems.add(where(r, stepIndex) + ": reads output past its end");
      } else {
        for (size_t i = 0; i < s.n; ++i) {
          if (written[r][s.outOff + i] == 0)
            problems.add(where(r, stepIndex) + ": sends output element " + std::to_string(s.outOff + i) +
                         " before it was written");
          v[i] = out[r][s.outOff + i];
        }
      }
    }
    if (t.accumulates) {
      // The output already holds a partial result: fold it into what was read (or start from it).
      if (s.outOff + s.n > outSize) {
        problems.add(where(r, stepIndex) + ": accumulates past the output's end");
      } else {
        for (size_t i = 0; i < s.n; ++i) {
          const Sym& acc = out[r][s.outOff + i];
          if (written[r][s.outOff + i] == 0)
            problems.add(where(r, stepIndex) + ": accumulates into output element " + std::to_string(s.outOff + i) +
                         " before it was written");
          if (t.readsInput) {
            reduceInto(v[i], acc);
          } else {
            v[i] = acc;
          }
        }
      }
    }
    if (t.recvs) {
      for (int p = 0; p < s.nRecvPeers; ++p) {
        Message m = std::move(edge(s.recvPeers[p], r).front());
        edge(s.recvPeers[p], r).pop_front();
        if (m.data.size() != s.n) {
          problems.add(where(r, stepIndex) + ": receives " + std::to_string(m.data.size()) + " elements from rank " +
                       std::to_string(s.recvPeers[p]) + " (its step " + std::to_string(m.senderStep) + ")");
          m.data.resize(s.n);
        }
        for (size_t i = 0; i < s.n; ++i) {
          if (t.reduces) {
            reduceInto(v[i], m.data[i]);
          } else {
            v[i] = m.data[i];
          }
        }
      }
    }
    if (s.postOp) {
      for (Sym& e : v) ++e.postOps;
    }
    if (t.writesOutput) {
      if (s.outOff + s.n > outSize) {
        problems.add(where(r, stepIndex) + ": writes output past its end");
      } else {
        for (size_t i = 0; i < s.n; ++i) {
          out[r][s.outOff + i] = v[i];
          if (!t.accumulates) ++written[r][s.outOff + i];  // an accumulation updates; it is no second write
        }
      }
    }
    if (t.sends) {
      for (int p = 0; p < s.nSendPeers; ++p) {
        Message m;
        if (p + 1 == s.nSendPeers) {
          m.data = std::move(v);  // the last peer takes the values, the others a copy
        } else {
          m.data = v;
        }
        m.senderStep = stepIndex;
        edge(r, s.sendPeers[p]).push_back(std::move(m));
      }
    }
    ++stepsRun;
  };

  bool progress = true;
  while (progress) {
    progress = false;
    for (int r = 0; r < n; ++r) {
      while (pc[r] < sched[r].size() && canRun(r, sched[r][pc[r]])) {
        execute(r, pc[r]);
        ++pc[r];
        progress = true;
      }
    }
  }

  // Stuck: say what every unfinished rank waits for, and follow the waits to a cycle.
  std::vector<int> waitsOn(n, -1);
  bool stuck = false;
  for (int r = 0; r < n; ++r) {
    if (pc[r] == sched[r].size()) continue;
    stuck = true;
    const Step& s = sched[r][pc[r]];
    const StepTraits t = stepTraits(s.kind);
    std::ostringstream os;
    os << "stuck: " << where(r, pc[r]) << " waits for";
    if (t.recvs) {
      for (int i = 0; i < s.nRecvPeers; ++i) {
        if (edge(s.recvPeers[i], r).empty()) {
          os << " a message from rank " << s.recvPeers[i];
          if (waitsOn[r] < 0) waitsOn[r] = s.recvPeers[i];
        }
      }
    }
    if (t.sends) {
      for (int i = 0; i < s.nSendPeers; ++i) {
        if (edge(r, s.sendPeers[i]).size() >= cfg.slots) {
          os << " room towards rank " << s.sendPeers[i];
          if (waitsOn[r] < 0) waitsOn[r] = s.sendPeers[i];
        }
      }
    }
    problems.add(os.str());
  }
  if (stuck) {
    for (int start = 0; start < n; ++start) {
      if (waitsOn[start] < 0) continue;
      std::vector<int> seen(n, -1);
      int r = start;
      int hop = 0;
      while (r >= 0 && seen[r] < 0) {
        seen[r] = hop++;
        r = waitsOn[r];
      }
      std::ostringstream os;
      if (r < 0) {
        os << "channel " << channel << ": rank " << start << " waits on a finished rank (a message never sent)";
      } else {
        os << "channel " << channel << ": wait cycle";
        int c = r;
        do {
          os << " " << c << " ->";
          c = waitsOn[c];
        } while (c != r);
        os << " " << r;
      }
      problems.add(os.str());
      break;
    }
  }
  for (int from = 0; from < n; ++from) {
    for (int to = 0; to < n; ++to) {
      if (!edge(from, to).empty()) {
        problems.add("channel " + std::to_string(channel) + ": " + std::to_string(edge(from, to).size()) +
                     " message(s) from rank " + std::to_string(from) + " to rank " + std::to_string(to) +
                     " never received");
      }
    }
  }
}

// What output element `i` of `rank` must hold, and whether the rank must write it at all.
inline bool expected(const SimConfig& cfg, int rank, size_t i, Sym& want) {
  const uint64_t all = cfg.nranks >= 64 ? ~uint64_t{0} : (uint64_t{1} << cfg.nranks) - 1;
  const uint32_t n = static_cast<uint32_t>(cfg.nranks);
  auto reduced = [&](size_t index) {
    want.index = static_cast<int64_t>(index);
    want.ranks = all;
    want.contribs = n;
    want.premuls = n;
    want.postOps = 1;
    want.reducedAfterPost = false;
  };
  auto copied = [&](int from, size_t index) {
    want.index = static_cast<int64_t>(index);
    want.ranks = uint64_t{1} << from;
    want.contribs = 1;
    want.premuls = 1;
    want.postOps = 0;
    want.reducedAfterPost = false;
  };
  switch (cfg.coll) {
    case Coll::kAllReduce: reduced(i); return true;
    case Coll::kReduceScatter: reduced(static_cast<size_t>(rank) * cfg.count + i); return true;
    case Coll::kReduce:
      if (rank != cfg.root) return false;
      reduced(i);
      return true;
    case Coll::kAllGather: copied(static_cast<int>(i / cfg.count), i % cfg.count); return true;
    case Coll::kBroadcast: copied(cfg.root, i); return true;
  }
  return false;
}

}  // namespace detail

inline SimResult simulate(const SimConfig& cfg) {
  using detail::Sym;
  SimResult result;
  detail::Problems problems;
  const int n = cfg.nranks;
  const size_t outSize = detail::outputSize(cfg);
  if ((cfg.algo == Algo::kRing && static_cast<int>(cfg.rings.size()) < cfg.nChannels) ||
      (cfg.algo == Algo::kTree && static_cast<int>(cfg.trees.size()) < cfg.nChannels)) {
    result.ok = false;
    result.report = describe(cfg) + ": fewer rings or trees than channels\n";
    return result;
  }
  std::vector<std::vector<Sym>> out(n, std::vector<Sym>(outSize));
  std::vector<std::vector<uint32_t>> written(n, std::vector<uint32_t>(outSize, 0));
  for (int c = 0; c < cfg.nChannels; ++c) detail::simulateChannel(cfg, c, out, written, problems, result.steps);

  // Every output element holds its result, written once; ranks without a result write nothing.
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < outSize; ++i) {
      Sym want;
      const bool mustWrite = detail::expected(cfg, r, i, want);
      const uint32_t writes = written[r][i];
      if (!mustWrite) {
        if (writes != 0) problems.add("rank " + std::to_string(r) + " writes output element " + std::to_string(i));
        continue;
      }
      if (writes != 1) {
        problems.add("rank " + std::to_string(r) + " output element " + std::to_string(i) + " written " +
                     std::to_string(writes) + " times");
      } else if (!(out[r][i] == want)) {
        problems.add("rank " + std::to_string(r) + " output element " + std::to_string(i) + " holds " +
                     detail::symString(out[r][i]) + ", want " + detail::symString(want));
      }
    }
  }
  result.ok = problems.count == 0;
  if (!result.ok) {
    result.report = describe(cfg) + ": " + std::to_string(problems.count) + " problem(s)\n" + problems.text.str();
  }
  return result;
}

}  // namespace chorus::coll::sim
