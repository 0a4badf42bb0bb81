// alltoall_perf: chorusAlltoAll; block j of rank r goes to rank j. Size = per-peer count * n;
// busbw = algbw * (n-1)/n. The in-place #wrong is N/A, as in nccl-tests.
#include "perf_test.h"

namespace chorus::perf {
namespace {

CollCounts counts(size_t count, size_t eltSize, int nranks) {
  const size_t base = perRankCount(count, eltSize, nranks);
  CollCounts c;
  c.sendCount = c.recvCount = base * nranks;
  c.paramCount = base;
  return c;
}

// Block j of the output is block `rank` of rank j's input.
bool expected(const Pattern& p, const CollCounts& c, int rank, int, void* out) {
  for (int j = 0; j < p.nranks; ++j) {
    fillInput(p, j, rank * c.paramCount, c.paramCount, static_cast<char*>(out) + j * c.paramCount * typeSize(p.type));
  }
  return true;
}

chorusResult_t run(const CallArgs& a, chorusComm_t comm, chorusStream_t stream, int) {
  return chorusAlltoAll(a.send, a.recv, a.count, a.type, comm, stream);
}

const Collective kAlltoAll{.programName = "alltoall_perf",
                           .callName = "chorusAlltoAll",
                           .kind = CollKind::kAlltoAll,
                           .usesOp = false,
                           .usesRoot = false,
                           .checksInPlace = false,
                           .needsPowerOfTwo = false,
                           .counts = counts,
                           .bandwidth = perRankBandwidth,
                           .expected = expected,
                           .run = run};

}  // namespace
}  // namespace chorus::perf

int main(int argc, char** argv) {
  return chorus::perf::runBenchmark(argc, argv, chorus::perf::kAlltoAll);
}
