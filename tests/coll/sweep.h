// The collective sweep: every collective x type x op x count x placement x root, run by every rank of a
// communicator in the same order, each rank checking every element it holds against the formula of
// common/test_data.h (and that nothing was written past its output).
#pragma once

#include <string>
#include <vector>

#include "chorus/chorus.h"

namespace chorus::test {

enum class Coll { kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter, kAllToAll, kGather, kScatter };
const char* collName(Coll c);

// Where a case's buffers come from: the heap, or chorusMemAlloc (memory the peers on the host map and read
// straight from, base/shared_alloc.h): both buffers, or one of the two, which changes from case to case and from
// rank to rank (references then name the one, and what lies in the other goes through the slots).
enum class SharedBuffers { kNone, kBoth, kOne };

struct SweepConfig {
  std::vector<Coll> colls;
  std::vector<chorusDataType_t> types;
  std::vector<chorusRedOp_t> ops;
  std::vector<size_t> counts;
  bool allRootsForLargeCounts = false;  // counts above 100000 use roots {0, n-1} unless set
  bool useStream = true;                // alternate stream and blocking (NULL stream) calls
  SharedBuffers shared = SharedBuffers::kNone;
  uint64_t seed = 1;
};

// The whole sweep (every collective, type, op; counts 0, 1, 7, 1021, 65537, 1048583).
SweepConfig fullSweep();
// The fast subset of the default test label.
SweepConfig quickSweep();
// The collectives that read chorusMemAlloc buffers through mappings (host_prims.h: broadcast, all-gather) and
// all-reduce, which does not, on types and counts that cross the slot and reference sizes (a reference covers whole
// slots' worth).
SweepConfig sharedBuffersSweep();
// The collectives of the host primitives on one count of 4 MiB per rank (past the FIFO's 1 MiB, and the default
// threshold of the mapped reads, CHORUS_MAPPED_MIN_BYTES).
SweepConfig largeSweep();
// largeSweep on 16 MiB per rank's block: every output past collectives/tuning.h's streamsOutput, so that the host
// primitives write it with streaming stores (and, for copies that also go to a peer, from the slot: host_prims.cc).
SweepConfig streamedSweep();

// Runs the sweep on comm; returns one line per failing case (empty: all passed).
std::vector<std::string> runSweep(chorusComm_t comm, const SweepConfig& cfg);

// The pieces of one case, for sweeps over other memory (tests/cuda runs them on device buffers).
struct CollCase {
  Coll coll;
  chorusDataType_t type;
  chorusRedOp_t op;  // chorusSum for collectives that do not reduce
  size_t count;      // the collective's count argument
  bool inPlace;
  int root;
  uint64_t seed;
};
bool reduces(Coll c);
bool rooted(Coll c);
// Elements of rank's send and receive buffers (both allocated separately, even in place).
void bufferElems(const CollCase& c, int nranks, size_t* sendElems, size_t* recvElems);
// For an in-place case, points *send into recv (or *recv into send) where the collective's in-place layout wants
// it; out of place it changes nothing.
void placeInPlace(const CollCase& c, int rank, char** send, char** recv);
// Writes rank's input at send (as many elements as bufferElems gives the send buffer).
void fillCaseInput(const CollCase& c, int rank, int nranks, void* send);
// Calls the collective.
chorusResult_t callCollective(const CollCase& c, const void* send, void* recv, chorusComm_t comm,
                              chorusStream_t stream);
// Checks every element rank holds after the collective (recv as placed by placeInPlace); returns the number of
// wrong elements and describes the first.
size_t countWrongResult(const CollCase& c, int rank, int nranks, const void* recv, std::string* first);
std::string describeCase(const CollCase& c, int rank);

// The guard after each buffer of a case: kGuardBytes bytes of kGuardByte, written before the call
// (writeGuard) and checked after it (guardIntact), so a write past a buffer's end is seen.
constexpr size_t kGuardBytes = 64;
constexpr unsigned char kGuardByte = 0xA5;
void writeGuard(char* end);
bool guardIntact(const char* end);

}  // namespace chorus::test
