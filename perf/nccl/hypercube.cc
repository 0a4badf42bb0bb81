// hypercube_perf: an all-gather made of send/recv, as nccl-tests' hypercube: at step `mask` (1, 2, 4, ...)
// each rank swaps the `mask` blocks it holds with rank ^ mask. Needs a power-of-two rank count.
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

bool expected(const Pattern& p, const CollCounts& c, int, int, void* out) {
  for (int r = 0; r < p.nranks; ++r) {
    fillInput(p, r, 0, c.paramCount, static_cast<char*>(out) + r * c.paramCount * typeSize(p.type));
  }
  return true;
}

chorusResult_t exchange(const void* send, void* recv, size_t count, chorusDataType_t type, int peer, chorusComm_t comm,
                        chorusStream_t stream) {
  chorusResult_t r = chorusGroupStart();
  if (r != chorusSuccess) return r;
  chorusResult_t s = chorusSend(send, count, type, peer, comm, stream);
  chorusResult_t v = chorusRecv(recv, count, type, peer, comm, stream);
  r = chorusGroupEnd();
  return s != chorusSuccess ? s : v != chorusSuccess ? v : r;
}

bool needsCopy(const CallArgs& a) {
  return static_cast<const char*>(a.recv) + a.rank * a.count * typeSize(a.type) != a.send;
}

int steps(const CallArgs& a) {
  int n = needsCopy(a) ? 1 : 0;
  for (int mask = 1; mask < a.nranks; mask <<= 1) ++n;
  return n;
}

// Step 0 out of place copies the rank's own block, in stream order: a send/recv to itself. Then step k swaps
// the 2^k blocks held with rank ^ 2^k.
chorusResult_t run(const CallArgs& a, chorusComm_t comm, chorusStream_t stream, int step) {
  const size_t rankBytes = a.count * typeSize(a.type);
  char* rbuff = static_cast<char*>(a.recv);
  if (needsCopy(a)) {
    if (step == 0) return exchange(a.send, rbuff + a.rank * rankBytes, a.count, a.type, a.rank, comm, stream);
    --step;
  }
  const int mask = 1 << step;
  const int s = a.rank & ~(mask - 1);
  const int r = s ^ mask;
  return exchange(rbuff + s * rankBytes, rbuff + r * rankBytes, a.count * mask, a.type, a.rank ^ mask, comm, stream);
}

const Collective kHyperCube{.programName = "hypercube_perf",
                            .callName = "chorusSend/chorusRecv (hypercube)",
                            .kind = CollKind::kHyperCube,
                            .usesOp = false,
                            .usesRoot = false,
                            .checksInPlace = true,
                            .needsPowerOfTwo = true,
                            .counts = counts,
                            .bandwidth = perRankBandwidth,
                            .expected = expected,
                            .run = run,
                            .steps = steps};

}  // namespace
}  // namespace chorus::perf

int main(int argc, char** argv) {
  return chorus::perf::runBenchmark(argc, argv, chorus::perf::kHyperCube);
}
