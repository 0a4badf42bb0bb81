// scatter_perf: chorusScatter from -r root (-1: every root in turn). Size = per-rank count * n;
// busbw = algbw * (n-1)/n.
#include "perf_test.h"

namespace chorus::perf {
namespace {

CollCounts counts(size_t count, size_t eltSize, int nranks) {
  const size_t base = perRankCount(count, eltSize, nranks);
  CollCounts c;
  c.sendCount = base * nranks;
  c.recvCount = base;
  c.paramCount = base;
  c.recvInplaceOffset = base;
  return c;
}

bool expected(const Pattern& p, const CollCounts& c, int rank, int root, void* out) {
  fillInput(p, root, rank * c.paramCount, c.recvCount, out);
  return true;
}

chorusResult_t run(const CallArgs& a, chorusComm_t comm, chorusStream_t stream, int) {
  return chorusScatter(a.send, a.recv, a.count, a.type, a.root, comm, stream);
}

const Collective kScatter{.programName = "scatter_perf",
                          .callName = "chorusScatter",
                          .kind = CollKind::kScatter,
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
  return chorus::perf::runBenchmark(argc, argv, chorus::perf::kScatter);
}
