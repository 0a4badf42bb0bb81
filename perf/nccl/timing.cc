// The benchmark loop of one thread, as nccl-tests' TimeTest and BenchTime: for each size, warm-up, then for the
// out-of-place and in-place halves a synchronizing launch, `iters` timed launches (each `agg` calls in a group)
// and one synchronize, the time averaged over ranks (-a), then -c check iterations on fresh inputs.
// Time = wall time of the launches plus the final synchronize, divided by iters * agg (-C: without it).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "driver.h"
#if CHORUS_PERF_HAVE_MPI
#include "mpi_backend.h"
#endif

namespace chorus::perf {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

class Bench {
 public:
  explicit Bench(ThreadContext& ctx) : ctx_(ctx), opts_(*ctx.opts), coll_(*ctx.coll) {}

  void runAll() {
    for (int cycle = 0; opts_.cycles == 0 || cycle < opts_.cycles; ++cycle) {
      for (chorusDataType_t type : opts_.types) {
        std::vector<chorusRedOp_t> ops = coll_.usesOp ? opts_.ops : std::vector<chorusRedOp_t>{chorusNumOps};
        for (chorusRedOp_t op : ops) {
          std::vector<int> roots{-1};
          if (coll_.usesRoot && opts_.root >= 0) roots = {opts_.root};
          if (coll_.usesRoot && opts_.root < 0) {
            roots.clear();
            for (int r = 0; r < ctx_.nranks; ++r) roots.push_back(r);
          }
          for (int root : roots) runSizes(type, op, root);
        }
      }
    }
  }

 private:
  void runSizes(chorusDataType_t type, chorusRedOp_t op, int root) {
    ctx_.team->barrier(ctx_.thread);
    for (size_t size = opts_.minBytes; size <= opts_.maxBytes;) {
      runRow(size, type, op, root);
      size_t next = opts_.stepFactor > 1 ? std::max<size_t>(size * opts_.stepFactor, 1) : size + opts_.stepBytes;
      if (next <= size) break;  // a step of 0, or overflow
      size = next;
    }
  }

  void runRow(size_t size, chorusDataType_t type, chorusRedOp_t op, int root) {
    type_ = type;
    op_ = op;
    root_ = root;
    elt_ = typeSize(type);
    counts_ = coll_.counts(size / elt_, elt_, ctx_.nranks);
    const size_t bytes = std::max(counts_.sendCount, counts_.recvCount) * elt_;
    if (ctx_.report != nullptr) {
      ctx_.report->rowStart(bytes, counts_.paramCount, typeName(type), coll_.usesOp ? opName(op) : "none", root);
    }
    const Backend primary = opts_.backend;
    warmUp(primary);
    if (opts_.compareMpi) warmUp(Backend::kMpi);
    HalfResult mpi[2];
    for (int inPlace = 0; inPlace < 2; ++inPlace) {
      HalfResult r = benchTime(primary, inPlace != 0);
      if (opts_.compareMpi) mpi[inPlace] = benchTime(Backend::kMpi, inPlace != 0);
      if (ctx_.report != nullptr) ctx_.report->rowHalf(r, inPlace == 0);
      ctx_.busBwSum += r.busBw;
      ctx_.busBwCount += 1;
      if (r.wrong > 0) ctx_.errors += 1;
      if (mpi[inPlace].wrong > 0) ctx_.errors += 1;
      if (opts_.compareMpi && ctx_.report != nullptr) {
        ctx_.report->rowCompare(mpi[inPlace], mpi[inPlace].busBw > 0 ? r.busBw / mpi[inPlace].busBw : 0, inPlace == 0);
      }
    }
    if (ctx_.report != nullptr) ctx_.report->rowEnd();
  }

  void warmUp(Backend b) {
    for (int i = 0; i < opts_.warmupIters; ++i) start(b, false, i);
    complete(b);
  }

  HalfResult benchTime(Backend b, bool inPlace) {
    watchdogArm();
    Pattern timing = pattern(0);
    for (RankState& r : ctx_.ranks) {
      fillInput(timing, r.rank, 0, counts_.sendCount, const_cast<void*>(callArgs(r, inPlace, 0).send));
    }
    start(b, inPlace, 0);  // sync
    complete(b);
    const int launches = opts_.iters * opts_.aggIters;
    if (opts_.compareMpi) primeSlices(inPlace, launches);
    ctx_.team->barrier(ctx_.thread);

    const bool group = b == Backend::kChorus && opts_.aggIters > 1;
    const Clock::time_point t0 = Clock::now();
    for (int iter = 0; iter < opts_.iters; ++iter) {
      if (group) checkChorus(chorusGroupStart(), "chorusGroupStart", ctx_.ranks[0]);
      for (int a = 0; a < opts_.aggIters; ++a) start(b, inPlace, iter * opts_.aggIters + a);
      if (group) checkChorus(chorusGroupEnd(), "chorusGroupEnd", ctx_.ranks[0]);
      if (opts_.blocking == 3) complete(b);
    }
    const double cpuSec = secondsSince(t0) / launches;
    complete(b);
    const double wallSec = secondsSince(t0) / launches;
    const double sec =
        ctx_.team->reduce(ctx_.thread, opts_.cpuTime ? cpuSec : wallSec, static_cast<ReduceMode>(opts_.average));
    HalfResult result;
    result.timeUs = sec * 1e6;
    coll_.bandwidth(counts_.paramCount, elt_, sec, ctx_.nranks, &result.algBw, &result.busBw);
    ctx_.team->barrier(ctx_.thread);
    if (opts_.check > 0 && (coll_.checksInPlace || !inPlace)) result.wrong = check(b, inPlace);
    return result;
  }

  // With --compare, both libraries time loops over the same buffer slices, one after the other: the first found
  // the slices out of cache and left them in it for the second (a 32 KiB out-of-place row cost whichever library
  // went first 7-8 us against 4-5 for the other). Each timed loop therefore starts with the slices it will use read
  // into the cache, as far as they fit (up to 16 MiB per buffer and rank; beyond, the loop streams from memory
  // either way). Reads only: the inputs keep their values.
  void primeSlices(bool inPlace, int launches) {
    constexpr size_t kPrimeBytes = 16u << 20;
    const size_t total = regionBytes();
    if (total == 0) return;
    const size_t slices = std::min(static_cast<size_t>(launches), sliceCount());
    if (slices * total > kPrimeBytes) return;
    uint64_t sum = 0;
    auto read = [&](const void* base) {
      const auto* p = static_cast<const volatile unsigned char*>(base);
      for (size_t off = 0; off < total; off += 64) sum += p[off];
    };
    for (RankState& r : ctx_.ranks) {
      for (size_t i = 0; i < slices; ++i) {  // the slices callArgs gives launch i (in place: the receive buffer's)
        read(static_cast<const char*>(r.recv.ptr) + sliceOffset(static_cast<int>(i)));
        if (!inPlace) read(static_cast<const char*>(r.send.ptr) + sliceOffset(static_cast<int>(i)));
      }
    }
    primeSink_ = sum;
  }

  // Fresh inputs (a new seed each time), a poisoned receive buffer, one launch, and every element compared.
  int64_t check(Backend b, bool inPlace) {
    int64_t wrong = 0;
    for (int c = 0; c < opts_.check; ++c) {
      const Pattern p = pattern(++seed_);
      std::vector<bool> checks(ctx_.ranks.size());
      for (size_t i = 0; i < ctx_.ranks.size(); ++i) {
        RankState& r = ctx_.ranks[i];
        CallArgs call = callArgs(r, inPlace, 0);
        std::memset(inPlace ? r.recv.ptr : call.recv, 0xA5, inPlace ? regionBytes() : counts_.recvCount * elt_);
        fillInput(p, r.rank, 0, counts_.sendCount, const_cast<void*>(call.send));
        checks[i] = coll_.expected(p, counts_, r.rank, root_, r.expected.ptr);
      }
      start(b, inPlace, 0);
      complete(b);
      int64_t local = 0;
      for (size_t i = 0; i < ctx_.ranks.size(); ++i) {
        if (!checks[i]) continue;
        RankState& r = ctx_.ranks[i];
        CallArgs call = callArgs(r, inPlace, 0);
        const void* result = call.recv;
#if CHORUS_PERF_HAVE_MPI
        if (b == Backend::kMpi) result = mpiResult(coll_.kind, call);
#endif
        const int64_t wrong = countWrong(p, result, r.expected.ptr, counts_.recvCount);
        if (wrong != 0 && debug_) printMismatches(r.rank, result, r.expected.ptr);
        local += wrong;
      }
      wrong = ctx_.team->reduce(ctx_.thread, local, ReduceMode::kSum);
      if (wrong != 0) break;
    }
    return wrong;
  }

  // CHORUS_PERF_DEBUG=1: the first wrong elements of each rank, as nccl-tests' DEBUG_PRINT.
  void printMismatches(int rank, const void* got, const void* want) const {
    const char* g = static_cast<const char*>(got);
    const char* w = static_cast<const char*>(want);
    int shown = 0;
    for (size_t j = 0; j < counts_.recvCount && shown < 8; ++j) {
      uint64_t a = 0;
      uint64_t b = 0;
      std::memcpy(&a, g + j * elt_, elt_);
      std::memcpy(&b, w + j * elt_, elt_);
      if (a == b) continue;
      std::fprintf(stderr, " rank=%d elt[%zu]: want=0x%llx got=0x%llx\n", rank, j, static_cast<unsigned long long>(b),
                   static_cast<unsigned long long>(a));
      ++shown;
    }
  }

  Pattern pattern(uint64_t seed) const {
    return Pattern{type_, op_, ctx_.nranks, seed};
  }

  size_t regionBytes() const {
    return std::max(counts_.sendCount, counts_.recvCount) * elt_;
  }

  // nccl-tests moves each launch to another slice of the buffers, so iterations do not reuse a hot cache.
  // How many slices of regionBytes() the buffers hold, and where launch `iter`'s starts.
  size_t sliceCount() const {
    const size_t total = regionBytes();
    return total != 0 ? std::max<size_t>(opts_.maxBytes / total, 1) : 1;
  }
  size_t sliceOffset(int iter) const {
    return regionBytes() * (static_cast<size_t>(iter) % sliceCount());
  }

  CallArgs callArgs(RankState& r, bool inPlace, int iter) const {
    const size_t shift = sliceOffset(iter);
    char* recv = static_cast<char*>(r.recv.ptr) + shift;
    char* send = static_cast<char*>(r.send.ptr) + shift;
    CallArgs c{};
    c.send = inPlace ? recv + counts_.sendInplaceOffset * elt_ * r.rank : send;
    c.recv = inPlace ? recv + counts_.recvInplaceOffset * elt_ * r.rank : recv;
    c.count = counts_.paramCount;
    c.type = type_;
    c.op = op_ == chorusNumOps ? chorusSum : op_;
    c.root = root_;
    c.rank = r.rank;
    c.nranks = ctx_.nranks;
    c.inPlace = inPlace;
    return c;
  }

  void start(Backend b, bool inPlace, int iter) {
    if (b == Backend::kMpi) {
#if CHORUS_PERF_HAVE_MPI
      std::string error;
      if (mpiRunCollective(coll_.kind, callArgs(ctx_.ranks[0], inPlace, iter), &error) != 0) {
        fatal("rank " + std::to_string(ctx_.ranks[0].rank) + ": MPI collective failed: " + error);
      }
      if (opts_.blocking == 1) ctx_.team->barrier(ctx_.thread);
#endif
      return;
    }
    // A thread with several ranks launches them in one group (per step), as nccl-tests does with -g.
    const bool group = ctx_.ranks.size() > 1;
    const int steps = coll_.steps != nullptr ? coll_.steps(callArgs(ctx_.ranks[0], inPlace, iter)) : 1;
    for (int step = 0; step < steps; ++step) {
      if (group) checkChorus(chorusGroupStart(), "chorusGroupStart", ctx_.ranks[0]);
      for (RankState& r : ctx_.ranks) {
        checkChorus(coll_.run(callArgs(r, inPlace, iter), r.comm, r.stream, step), coll_.callName, r);
      }
      if (group) checkChorus(chorusGroupEnd(), "chorusGroupEnd", ctx_.ranks[0]);
    }
    if (opts_.blocking == 1 || opts_.blocking == 2) complete(b);
    if (opts_.blocking == 1) ctx_.team->barrier(ctx_.thread);
  }

  void complete(Backend b) {
    if (b == Backend::kMpi) return;  // MPI's collectives are blocking
    for (RankState& r : ctx_.ranks) {
      if (r.stream != nullptr) checkChorus(chorusStreamSynchronize(r.stream), "chorusStreamSynchronize", r);
    }
  }

  ThreadContext& ctx_;
  const Options& opts_;
  const Collective& coll_;
  chorusDataType_t type_ = chorusFloat32;
  chorusRedOp_t op_ = chorusSum;
  int root_ = -1;
  volatile uint64_t primeSink_ = 0;  // what primeSlices read, so that the reads stay
  size_t elt_ = 4;
  CollCounts counts_;
  uint64_t seed_ = 0;
  const bool debug_ = std::getenv("CHORUS_PERF_DEBUG") != nullptr && std::atoi(std::getenv("CHORUS_PERF_DEBUG")) != 0;
};

}  // namespace

void runThread(ThreadContext& ctx) {
  Bench(ctx).runAll();
}

}  // namespace chorus::perf
