// reduce_scatter_perf: chorusReduceScatter. Size = per-rank count * n; busbw = algbw * (n-1)/n.
#include "perf_test.h"

namespace chorus::perf {
namespace {

CollCounts counts(size_t count, size_t eltSize, int nranks) {
  const size_t base = perRankCount(count, eltSize, nranks);
  CollCounts c;
  c.sendCount = base * nranks;
  c.recvCount = base;
  c.paramCount = base;
  c.recvInplaceOffset = base;  // in place, rank r's result is block r of the input
  return c;
}

bool expected(const Pattern& p, const CollCounts& c, int rank, int, void* out) {
  fillReduced(p, rank * c.paramCount, c.recvCount, out);
  return true;
}

chorusResult_t run(const CallArgs& a, chorusComm_t comm, chorusStream_t stream, int) {
  return chorusReduceScatter(a.send, a.recv, a.count, a.type, a.op, comm, stream);
}

const Collective kReduceScatter{.programName = "reduce_scatter_perf",
                                .callName = "chorusReduceScatter",
                                .kind = CollKind::kReduceScatter,
                                .usesOp = true,
                                .usesRoot = false,
                                .checksInPlace = true,
                                .needsPowerOfTwo = false,
                                .counts = counts,
                                .bandwidth = perRankBandwidth,
                                .expected = expected,
                                .run = run};

}  // namespace
}  // namespace chorus::perf

int main(int argc, char** argv) {
  return chorus::perf::runBenchmark(argc, argv, chorus::perf::kReduceScatter);
}
