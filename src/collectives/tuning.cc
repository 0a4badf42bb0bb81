#include "collectives/tuning.h"

#include <strings.h>
#include <algorithm>
#include <atomic>
#include <cmath>

#include "base/error.h"
#include "base/logging.h"
#include "base/params.h"
#include "transport/fifo_geometry.h"

namespace chorus::coll {

namespace {

constexpr LinkCost kShm{1.0, 8.0};
constexpr LinkCost kNet{15.0, 2.0};
// Largest message of a direct algorithm (an all-reduce moves (nranks-1) times its buffer per rank).
constexpr size_t kDirectMaxBytes = 32u << 10;

LinkCost linkCost(const TuningContext& t) {
  return t.nHosts > 1 ? kNet : kShm;
}

// The point-to-point operations count as "direct" (every rank to every rank), for logs.
bool algoApplies(CollType type, Algo algo) {
  return isP2p(type) ? algo == Algo::kDirect : hasAlgorithm(type, algo);
}

bool parseAlgoName(const std::string& name, Algo* a) {
  if (strcasecmp(name.c_str(), "ring") == 0)
    *a = Algo::kRing;
  else if (strcasecmp(name.c_str(), "tree") == 0)
    *a = Algo::kTree;
  else if (strcasecmp(name.c_str(), "direct") == 0)
    *a = Algo::kDirect;
  else
    return false;
  return true;
}

}  // namespace

bool forcedAlgo(const std::string& spec, CollType type, Algo* algo) {
  bool found = false;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t semi = spec.find(';', pos);
    std::string item = spec.substr(pos, semi == std::string::npos ? std::string::npos : semi - pos);
    pos = semi == std::string::npos ? spec.size() + 1 : semi + 1;
    if (item.empty()) continue;
    size_t colon = item.find(':');
    std::string func = colon == std::string::npos ? "" : item.substr(0, colon);
    std::string name = colon == std::string::npos ? item : item.substr(colon + 1);
    Algo a;
    CHORUS_CHECK_ARG(parseAlgoName(name, &a), "CHORUS_ALGO: unknown algorithm '", name, "' (ring, tree, direct)");
    if (func.empty()) {
      if (!found && algoApplies(type, a)) {
        *algo = a;
        found = true;
      }
    } else if (strcasecmp(func.c_str(), collName(type)) == 0) {
      // A per-function entry wins over the default.
      CHORUS_CHECK_ARG(algoApplies(type, a), "CHORUS_ALGO: ", name, " does not implement ", collName(type));
      *algo = a;
      return true;
    }
  }
  return found;
}

uint64_t newTuningId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

double predictUs(const CollOp& op, Algo algo, const TuningContext& t) {
  if (!algoApplies(op.type, algo)) return -1;
  const LinkCost c = linkCost(t);
  const double n = t.nranks;
  const double bytes = static_cast<double>(collBytes(op, t.nranks));
  const double bw = c.bandwidthGBs * 1e3;  // bytes per microsecond
  if (t.nranks <= 1) return bytes / bw;
  const double logn = std::ceil(std::log2(n));
  if (algo == Algo::kDirect && op.type != CollType::kAllReduce && !isP2p(op.type)) {
    // One step; every message (a rank's block, or the whole buffer of a broadcast or a reduce) must fit one FIFO
    // slot. The busiest rank (a root, or every rank) sends or receives n-1 of them.
    const bool wholeBuffer = op.type == CollType::kBroadcast || op.type == CollType::kReduce;
    const double msg = wholeBuffer ? bytes : bytes / n;
    if (msg > static_cast<double>(std::min<size_t>(t.slotBytes, kDirectMaxBytes)) || t.nranks > 16) return -1;
    return c.latencyUs + (n - 1) * msg / bw;
  }
  switch (op.type) {
    case CollType::kAllReduce:
      // Direct: one hop, but every rank receives and reduces every other rank's whole buffer; it must fit
      // one FIFO slot.
      if (algo == Algo::kDirect) {
        if (bytes > static_cast<double>(std::min<size_t>(t.slotBytes, kDirectMaxBytes)) || t.nranks > 16) return -1;
        return c.latencyUs + (n - 1) * bytes / bw;
      }
      if (algo == Algo::kRing) return 2 * (n - 1) * c.latencyUs + 2 * (n - 1) / n * bytes / bw;
      // Tree: up and down the tree; each level moves the whole buffer, pipelined.
      return 2 * logn * c.latencyUs + 2 * bytes / bw;
    case CollType::kBroadcast:
    case CollType::kReduce:
      if (algo == Algo::kRing) return (n - 1) * c.latencyUs + bytes / bw;
      return logn * c.latencyUs + 1.5 * bytes / bw;
    case CollType::kAllGather:
    case CollType::kReduceScatter: return (n - 1) * c.latencyUs + (n - 1) / n * bytes / bw;
    default: return c.latencyUs + (n - 1) / n * bytes / bw;
  }
}

namespace {

// The model's choice for `op`, without tune()'s per-thread cache.
void chooseFresh(CollOp& op, const TuningContext& t) {
  const std::string& spec = t.algoSpec;
  Algo forced;
  // A forced algorithm that cannot take this operation (direct beyond its size) falls back to the model.
  if (!spec.empty() && forcedAlgo(spec, op.type, &forced) && predictUs(op, forced, t) >= 0) {
    op.algo = forced;
  } else {
    double best = -1;
    for (Algo a : {Algo::kRing, Algo::kTree, Algo::kDirect}) {
      if (a == Algo::kDirect && !t.directByModel) continue;
      if (a == Algo::kTree && !t.treeByModel) continue;
      double us = predictUs(op, a, t);
      if (us >= 0 && (best < 0 || us < best)) {
        best = us;
        op.algo = a;
      }
    }
  }
  const size_t bytes = collBytes(op, t.nranks);
  // Channels: one per bytesPerChannel handled, within the prepared rings.
  int ch = static_cast<int>(
      std::min<size_t>(bytes / std::max<size_t>(t.bytesPerChannel, 1) + 1, static_cast<size_t>(t.maxChannels)));
  ch = std::max(ch, t.minChannels);
  if (op.algo == Algo::kTree && t.parallelChannels) ch = std::max(ch, 2);  // both trees (TuningContext)
  if (op.algo == Algo::kDirect) ch = 1;
  op.nChannels = std::clamp(ch, 1, std::max(t.maxChannels, 1));
  // Half a FIFO per chunk keeps two chunks in flight, as NCCL's chunkSteps 4 of 8 slots. A chunk set by
  // CHORUS_CHUNKSIZE may be smaller, not larger: in a ring every rank sends a chunk before it receives one, then
  // takes a slot for the next while it still holds the received one, so a chunk needs at most half of its peer's
  // FIFO (2 ranks: 1 MiB or 2 MiB chunks on 1 MiB of slots waited for each other until the deadline).
  const size_t halfFifo = std::max<size_t>(t.slotBytes * (transport::kFifoSlots / 2), 4096);
  op.chunkBytes = t.forcedChunk > 0 ? std::min(static_cast<size_t>(t.forcedChunk), halfFifo) : halfFifo;
  CHORUS_LOG_INFO(kTuning, collName(op.type), ": ", bytes, " bytes, ", t.nranks, " ranks on ", t.nHosts, " hosts -> ",
                  algoName(op.algo), ", ", op.nChannels, " channels, chunk ", op.chunkBytes, " bytes (ring ",
                  predictUs(op, Algo::kRing, t), " us, tree ", predictUs(op, Algo::kTree, t), " us)");
}

}  // namespace

bool useSingleCopy(CollType type, size_t bytes) {
  // Off unless CHORUS_CMA_MIN_BYTES asks for it: measured against the two-copy path on the same build
  // (docs/performance.md, "Single copy"), it won nowhere clearly on this machine (out-of-place broadcast 0-25 %,
  // all-gather within noise) and lost where it matters: in-place broadcast 2.5-4x slower, all-to-all and
  // send/recv of 4-16 MiB up to 2x slower.
  const int64_t from = param::CmaMinBytes();
  if (from <= 0) return false;
  // A point-to-point transfer that fits the FIFO's slots completes without its receiver (a send posted before
  // the matching receive, outside a group, does not block); by reference it would wait for the receiver.
  if (isP2p(type) && bytes <= transport::fifoSlotBytes() * transport::kFifoSlots) return false;
  return bytes >= static_cast<size_t>(from);
}

bool useSingleCopyToReceiver(size_t bytes, bool readsFast) {
  // Measured with sendrecv_perf, 2 ranks, out of place (docs/performance.md): on an Intel Xeon, on the same buffers
  // every launch, one copy took 64 KiB from 7.6 to 4.3 us and 512 KiB from 53.9 to 18.9 (Open MPI, which reads by
  // CMA from 4 KiB up: 4.2 and 20.0); on buffers out of cache it lost at 32 KiB (7.4 against 5.4 us) and broke even
  // at 64 KiB. On an AMD EPYC VM whose kernel copies at a seventh of memcpy's speed, it lost at every size.
  constexpr int64_t kDefaultFrom = int64_t{64} << 10;
  int64_t from = param::P2pCmaMinBytes();
  if (from < 0) from = readsFast ? kDefaultFrom : 0;
  return from > 0 && bytes >= static_cast<size_t>(from);
}

bool useMappedRefs(CollType type, size_t bytes, bool inPlace) {
  // Measured with -R 1 buffers, 2 ranks, 3 alternated rounds against the slots (docs/performance.md, session 15):
  // broadcast out of place 16 MiB 1.4-1.9 -> 0.9-1.2 ms, 64 MiB 6.1-6.2 -> 3.9-4.4 ms; all-gather 16 MiB 1.20-1.28 ->
  // 0.96-1.03 ms, 64 MiB 5.1-5.9 -> 4.3-4.7 ms; all-reduce 10 % slower out of place, reduce-scatter level. At 1 MiB
  // 10-30 % faster at 2 ranks, but 20-50 % slower at 4 ranks on 2 cores, where a sender waiting for its readers holds a
  // core another rank needs: hence 4 MiB.
  const int64_t from = param::MappedMinBytes();
  if (from <= 0 || bytes < static_cast<size_t>(from) || inPlace) return false;
  return type == CollType::kBroadcast || type == CollType::kAllGather;
}

void tune(CollOp& op, const TuningContext& t) {
  // Training loops repeat the same few calls: the last decision per thread is kept, keyed by the context's
  // id (unique per communicator, where an address could be reused) and the size.
  struct Decision {
    uint64_t id = 0;  // 0: none (a context without an id is never cached)
    CollType type = CollType::kAllReduce;
    size_t bytes = 0;
    Algo algo = Algo::kRing;
    int nChannels = 1;
    size_t chunkBytes = 0;
  };
  thread_local Decision last;
  const size_t opBytes = collBytes(op, t.nranks);
  if (t.id != 0 && last.id == t.id && last.type == op.type && last.bytes == opBytes) {
    op.algo = last.algo;
    op.nChannels = last.nChannels;
    op.chunkBytes = last.chunkBytes;
    return;
  }
  chooseFresh(op, t);
  last = Decision{t.id, op.type, opBytes, op.algo, op.nChannels, op.chunkBytes};
}

}  // namespace chorus::coll
