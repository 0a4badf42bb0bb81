// Shared declarations of the nccl-tests-compatible benchmarks (all_reduce_perf and friends).
//
// The layout follows nccl-tests: one driver (args, output, check, timing, launch, the MPI backend) and one small
// file per collective that describes its counts, bandwidth factors, expected result and how to launch it, then
// calls runBenchmark() from main(). Only the public header <chorus/chorus.h> is used.
#ifndef CHORUS_PERF_NCCL_PERF_TEST_H_
#define CHORUS_PERF_NCCL_PERF_TEST_H_

#include <chorus/chorus.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace chorus::perf {

enum class CollKind {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAlltoAll,
  kGather,
  kScatter,
  kSendRecv,
  kHyperCube
};

enum class Backend { kChorus, kMpi };

// Exit statuses of every *_perf program.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;  // wrong results, a library error, a bandwidth below NCCL_TESTS_MIN_BW
constexpr int kExitUsage = 2;    // bad command line
constexpr int kExitTimeout = 3;  // -T expired

// Command line options; defaults are nccl-tests' (src/common.cu of nccl-tests).
struct Options {
  int nThreads = 1;                     // -t
  int nGpus = 1;                        // -g: ranks driven by each thread
  size_t minBytes = 32u << 20;          // -b
  size_t maxBytes = 32u << 20;          // -e
  size_t stepBytes = 1u << 20;          // -i
  size_t stepFactor = 1;                // -f (1: step by bytes)
  int iters = 20;                       // -n
  int warmupIters = 1;                  // -w, before each size
  int aggIters = 1;                     // -m: launches per group
  int cycles = 1;                       // -N (0: forever)
  int parallelInit = 0;                 // -p
  int check = 1;                        // -c: check iterations (0: #wrong is N/A)
  std::vector<chorusRedOp_t> ops;       // -o (sum)
  std::vector<chorusDataType_t> types;  // -d (float)
  int root = 0;                         // -r (-1: every root)
  int blocking = 0;                     // -z: 0 none, 1 wait+barrier, 2 wait, 3 wait per outer iteration
  int streamNull = 0;                   // -y
  int timeoutSec = 0;                   // -T (0: none)
  int cpuTime = 0;                      // -C: report the launch time without the final synchronize
  int average = 1;                      // -a: 0 rank 0, 1 average, 2 min, 3 max
  int registration = 0;                 // -R: 1 chorusMemAlloc + chorusCommRegister
  std::string jsonPath;                 // -J
  Backend backend = Backend::kChorus;   // --backend
  bool compareMpi = false;              // --compare mpi
  std::vector<std::string> argv;        // for the JSON record
};

// Parses argv. Returns kExitOk, or kExitUsage after printing one line naming the flag (quiet: print nothing),
// or -1 after printing the usage for -h.
int parseOptions(int argc, char** argv, bool quiet, Options* opts);

// ---- element types -------------------------------------------------------------------------------------------

size_t typeSize(chorusDataType_t type);
const char* typeName(chorusDataType_t type);
const char* opName(chorusRedOp_t op);
bool isFloatType(chorusDataType_t type);
// Float types: the value of one element as a double, and the element nearest to v (ties to even).
double loadFloat(const void* elt, chorusDataType_t type);
void storeFloat(void* elt, chorusDataType_t type, double v);
// Integer types: the value of one element, and v stored with two's complement wrap-around.
int64_t loadInt(const void* elt, chorusDataType_t type);
void storeInt(void* elt, chorusDataType_t type, int64_t v);

// ---- data: inputs are a formula of (rank, index, seed) -------------------------------------------------------

// Which formula to use. Values are small integers, chosen per type, operation and rank count so that every
// partial result of any reduction order is exact (see check.cc).
struct Pattern {
  chorusDataType_t type;
  chorusRedOp_t op;  // chorusNumOps for data-movement collectives
  int nranks;
  uint64_t seed;
};

// Element `index` of rank `rank`'s input.
int64_t inputValue(const Pattern& p, int rank, size_t index);
// dst[j] = element (offset + j) of rank's input, for j < count.
void fillInput(const Pattern& p, int rank, size_t offset, size_t count, void* dst);
// dst[j] = the reduction over every rank of element (offset + j), with p.op.
void fillReduced(const Pattern& p, size_t offset, size_t count, void* dst);
// Number of elements of got that differ from expected (2 ulps of tolerance for float avg).
int64_t countWrong(const Pattern& p, const void* got, const void* expected, size_t count);

// ---- collectives ---------------------------------------------------------------------------------------------

// Element counts of one size, as nccl-tests' getCollByteCount. In place, the call's send buffer is
// recvbuff + rank * sendInplaceOffset and its receive buffer recvbuff + rank * recvInplaceOffset.
struct CollCounts {
  size_t sendCount = 0;
  size_t recvCount = 0;
  size_t paramCount = 0;  // the count passed to the call; the "count" column
  size_t sendInplaceOffset = 0;
  size_t recvInplaceOffset = 0;
};

// One launch on one rank.
struct CallArgs {
  const void* send;
  void* recv;
  size_t count;
  chorusDataType_t type;
  chorusRedOp_t op;
  int root;
  int rank;
  int nranks;
  bool inPlace;
};

struct Collective {
  const char* programName;  // "all_reduce_perf"
  const char* callName;     // "chorusAllReduce", for error messages
  CollKind kind;
  bool usesOp;           // the redop column and -o apply
  bool usesRoot;         // the root column and -r apply
  bool checksInPlace;    // false: the in-place #wrong is N/A (nccl-tests: alltoall, sendrecv)
  bool needsPowerOfTwo;  // hypercube
  CollCounts (*counts)(size_t count, size_t eltSize, int nranks);
  // algbw and busbw in GB/s of one call of `count` elements taking `sec` seconds.
  void (*bandwidth)(size_t count, size_t eltSize, double sec, int nranks, double* algBw, double* busBw);
  // Fills expected (counts.recvCount elements) for rank; returns false when this rank has nothing to check.
  bool (*expected)(const Pattern& p, const CollCounts& counts, int rank, int root, void* expected);
  chorusResult_t (*run)(const CallArgs& call, chorusComm_t comm, chorusStream_t stream, int step);
  // Collectives made of dependent groups (hypercube) run in steps, so that a thread driving several ranks
  // groups step s of all of them, then step s+1. nullptr: one step.
  int (*steps)(const CallArgs& call) = nullptr;
};

// Counts of collectives that split `count` over ranks: per-rank counts rounded down to 16 bytes.
size_t perRankCount(size_t count, size_t eltSize, int nranks);

// Collective::bandwidth of the collectives whose size is `count` elements per rank times nranks and whose
// busbw factor is (n-1)/n, as nccl-tests: all-gather, reduce-scatter, all-to-all, gather, scatter, hypercube.
void perRankBandwidth(size_t count, size_t eltSize, double sec, int nranks, double* algBw, double* busBw);
// Collective::bandwidth of the collectives that move one buffer of `count` elements, busbw = algbw:
// broadcast, reduce, send/recv.
void wholeBufferBandwidth(size_t count, size_t eltSize, double sec, int nranks, double* algBw, double* busBw);

// The whole program: parses flags, launches ranks, prints the table. Returns the exit status.
int runBenchmark(int argc, char** argv, const Collective& coll);

}  // namespace chorus::perf

#endif  // CHORUS_PERF_NCCL_PERF_TEST_H_
