// gather_perf: chorusGather to -r root (-1: every root in turn); only the root's result is checked.
// Size = per-rank count * n; busbw = algbw * (n-1)/n.
#include "perf_test.h"

namespace chorus::perf {
namespace {

CollCounts counts(size_t count, size_t eltSize, int nranks) {
  const size_t base = perRankCount(count, eltSize, nranks);
  CollCounts c;
  c.sendCount = base;
  c.recvCount = base * nranks;
  c.paramCount = base;
  c.sendInplaceOffset = base;
  return c;
}

bool expected(const Pattern& p, const CollCounts& c, int rank, int root, void* out) {
  if (rank != root) return false;
  for (int r = 0; r < p.nranks; ++r) {
    fillInput(p, r, 0, c.paramCount, static_cast<char*>(out) + r * c.paramCount * typeSize(p.type));
  }
  return true;
}

chorusResult_t run(const CallArgs& a, chorusComm_t comm, chorusStream_t stream, int) {
  return chorusGather(a.send, a.recv, a.count, a.type, a.root, comm, stream);
}

const Collective kGather{.programName = "gather_perf",
                         .callName = "chorusGather",
                         .kind = CollKind::kGather,
                         .usesOp = false,
                         .usesRoot = true,
                         .checksInPlace = true,
                         .needsPowerOfTwo = false,
                         .counts = counts,
                         .bandwidth = perRankBandwidth,
                         .expected = expected,
                         .run = run};

}  // namespace
}  // namespace chorus::perf

int main(int argc, char** argv) {
  return chorus::perf::runBenchmark(argc, argv, chorus::perf::kGather);
}
