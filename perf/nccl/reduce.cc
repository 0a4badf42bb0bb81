// reduce_perf: chorusReduce to -r root (-1: every root in turn); only the root's result is checked.
// busbw = algbw.
#include "perf_test.h"

namespace chorus::perf {
namespace {

CollCounts counts(size_t count, size_t, int) {
  CollCounts c;
  c.sendCount = c.recvCount = c.paramCount = count;
  return c;
}

bool expected(const Pattern& p, const CollCounts& c, int rank, int root, void* out) {
  if (rank != root) return false;
  fillReduced(p, 0, c.recvCount, out);
  return true;
}

chorusResult_t run(const CallArgs& a, chorusComm_t comm, chorusStream_t stream, int) {
  return chorusReduce(a.send, a.recv, a.count, a.type, a.op, a.root, comm, stream);
}

const Collective kReduce{.programName = "reduce_perf",
                         .callName = "chorusReduce",
                         .kind = CollKind::kReduce,
                         .usesOp = true,
                         .usesRoot = true,
                         .checksInPlace = true,
                         .needsPowerOfTwo = false,
                         .counts = counts,
                         .bandwidth = wholeBufferBandwidth,
                         .expected = expected,
                         .run = run};

}  // namespace
}  // namespace chorus::perf

int main(int argc, char** argv) {
  return chorus::perf::runBenchmark(argc, argv, chorus::perf::kReduce);
}
