// all_reduce_perf: chorusAllReduce. busbw = algbw * 2(n-1)/n.
#include "perf_test.h"

namespace chorus::perf {
namespace {

CollCounts counts(size_t count, size_t, int) {
  CollCounts c;
  c.sendCount = c.recvCount = c.paramCount = count;
  return c;
}

void bandwidth(size_t count, size_t eltSize, double sec, int nranks, double* algBw, double* busBw) {
  *algBw = sec > 0 ? static_cast<double>(count * eltSize) / 1e9 / sec : 0;
  *busBw = *algBw * 2.0 * (nranks - 1) / nranks;
}

bool expected(const Pattern& p, const CollCounts& c, int, int, void* out) {
  fillReduced(p, 0, c.recvCount, out);
  return true;
}

chorusResult_t run(const CallArgs& a, chorusComm_t comm, chorusStream_t stream, int) {
  return chorusAllReduce(a.send, a.recv, a.count, a.type, a.op, comm, stream);
}

const Collective kAllReduce{.programName = "all_reduce_perf",
                            .callName = "chorusAllReduce",
                            .kind = CollKind::kAllReduce,
                            .usesOp = true,
                            .usesRoot = false,
                            .checksInPlace = true,
                            .needsPowerOfTwo = false,
                            .counts = counts,
                            .bandwidth = bandwidth,
                            .expected = expected,
                            .run = run};

}  // namespace
}  // namespace chorus::perf

int main(int argc, char** argv) {
  return chorus::perf::runBenchmark(argc, argv, chorus::perf::kAllReduce);
}
