// broadcast_perf: chorusBroadcast from -r root (-1: every root in turn). busbw = algbw.
#include "perf_test.h"

namespace chorus::perf {
namespace {

CollCounts counts(size_t count, size_t, int) {
  CollCounts c;
  c.sendCount = c.recvCount = c.paramCount = count;
  return c;
}

bool expected(const Pattern& p, const CollCounts& c, int, int root, void* out) {
  fillInput(p, root, 0, c.recvCount, out);
  return true;
}

chorusResult_t run(const CallArgs& a, chorusComm_t comm, chorusStream_t stream, int) {
  return chorusBroadcast(a.send, a.recv, a.count, a.type, a.root, comm, stream);
}

const Collective kBroadcast{.programName = "broadcast_perf",
                            .callName = "chorusBroadcast",
                            .kind = CollKind::kBroadcast,
                            .usesOp = false,
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
  return chorus::perf::runBenchmark(argc, argv, chorus::perf::kBroadcast);
}
