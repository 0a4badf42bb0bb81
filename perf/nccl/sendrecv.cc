// sendrecv_perf: every rank sends to rank+1 and receives from rank-1 (chorusSend + chorusRecv in a group).
// busbw = algbw. The in-place #wrong is N/A, as in nccl-tests.
#include "perf_test.h"

namespace chorus::perf {
namespace {

CollCounts counts(size_t count, size_t, int) {
  CollCounts c;
  c.sendCount = c.recvCount = c.paramCount = count;
  return c;
}

bool expected(const Pattern& p, const CollCounts& c, int rank, int, void* out) {
  fillInput(p, (rank - 1 + p.nranks) % p.nranks, 0, c.recvCount, out);
  return true;
}

chorusResult_t run(const CallArgs& a, chorusComm_t comm, chorusStream_t stream, int) {
  const int next = (a.rank + 1) % a.nranks;
  const int prev = (a.rank - 1 + a.nranks) % a.nranks;
  chorusResult_t r = chorusGroupStart();
  if (r != chorusSuccess) return r;
  chorusResult_t send = chorusSend(a.send, a.count, a.type, next, comm, stream);
  chorusResult_t recv = chorusRecv(a.recv, a.count, a.type, prev, comm, stream);
  r = chorusGroupEnd();
  return send != chorusSuccess ? send : recv != chorusSuccess ? recv : r;
}

const Collective kSendRecv{.programName = "sendrecv_perf",
                           .callName = "chorusSend/chorusRecv",
                           .kind = CollKind::kSendRecv,
                           .usesOp = false,
                           .usesRoot = false,
                           .checksInPlace = false,
                           .needsPowerOfTwo = false,
                           .counts = counts,
                           .bandwidth = wholeBufferBandwidth,
                           .expected = expected,
                           .run = run};

}  // namespace
}  // namespace chorus::perf

int main(int argc, char** argv) {
  return chorus::perf::runBenchmark(argc, argv, chorus::perf::kSendRecv);
}
