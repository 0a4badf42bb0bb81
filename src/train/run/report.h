// What rank 0 prints and logs: the start banner, a line per step, validation losses, the memory table beside
// ZeRO's formulas, the communication table and the final summary; and the CSV log (one row per step whose
// first two columns are step and loss).
#ifndef CHORUS_TRAIN_RUN_REPORT_H_
#define CHORUS_TRAIN_RUN_REPORT_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "comm/comm.h"

namespace chorus::train {

struct StepRecord {
  int64_t step = 0;
  double loss = 0;
  double valLoss = -1;  // < 0: not measured this step
  double lr = 0;
  double gradNorm = 0;
  double tokensPerSecond = 0;
  double stepMs = 0;
  double exposedCommMs = 0;
  double mfu = 0;
};

// Per rank: bytes held by kind (MemKind order) and the formula's bytes for its ZeRO stage.
struct MemoryRow {
  int rank = 0;
  std::vector<int64_t> bytes;
  int64_t psi = 0;  // parameters of the rank's part of the model (its flat buffer)
  int64_t formula = 0;
};

// A group's measured statistics, for the communication table.
struct GroupVolume {
  std::string group;
  const CommStats* stats = nullptr;
};
// What the literature's formulas give per step for one group and collective.
struct ExpectedVolume {
  std::string group;
  CollKind kind = CollKind::kAllReduce;
  double messageBytes = 0;  // per step
  std::string formula;
  bool atMost = false;  // an upper bound (ZeRO-3's gathers: a unit still gathered is not gathered again)
};

class Report {
 public:
  // Only the reporting rank (world rank 0) passes active = true; the others' calls do nothing.
  Report(bool active, bool quiet);
  ~Report();
  // Starts the CSV log (truncating the file): called once the run is known to be able to start, so a
  // refused run leaves an existing log untouched.
  void openCsv(const std::string& path);
  // After an elastic recovery the survivors' rank 0 reports: it starts reporting, appending to the CSV log.
  void takeOver(const std::string& csvPath);

  bool active() const { return active_; }
  void line(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  void step(const StepRecord& r, int64_t totalSteps, bool print);
  void memory(const std::vector<MemoryRow>& rows, int zero, int dp);
  // Per group and collective: calls and message bytes per step, measured, beside the formula's bytes.
  void volumes(const std::vector<GroupVolume>& measured, const std::vector<ExpectedVolume>& expected, int steps);

 private:
  bool active_, quiet_;
  FILE* csv_ = nullptr;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_RUN_REPORT_H_
