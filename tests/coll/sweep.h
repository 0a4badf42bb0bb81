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

struct SweepConfig {
  std::vector<Coll> colls;
  std::vector<chorusDataType_t> types;
  std::vector<chorusRedOp_t> ops;
  std::vector<size_t> counts;
  bool allRootsForLargeCounts = false;  // counts above 100000 use roots {0, n-1} unless set
  bool useStream = true;                // alternate stream and blocking (NULL stream) calls
  uint64_t seed = 1;
};

// The whole sweep (every collective, type, op; counts 0, 1, 7, 1021, 65537, 1048583).
SweepConfig fullSweep();
// The fast subset of the default test label.
SweepConfig quickSweep();

// Runs the sweep on comm; returns one line per failing case (empty: all passed).
std::vector<std::string> runSweep(chorusComm_t comm, const SweepConfig& cfg);

}  // namespace chorus::test
