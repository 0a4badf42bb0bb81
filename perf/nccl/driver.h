// Internals of the driver shared by its files: the report (text and JSON), the per-thread benchmark state,
// the watchdog behind -T, and fatal errors.
#ifndef CHORUS_PERF_NCCL_DRIVER_H_
#define CHORUS_PERF_NCCL_DRIVER_H_

#include <cstdio>
#include <string>
#include <vector>

#include "perf_test.h"
#include "team.h"

namespace chorus::perf {

// One half (out-of-place or in-place) of a table row.
struct HalfResult {
  double timeUs = 0;
  double algBw = 0;
  double busBw = 0;
  int64_t wrong = -1;  // -1: not checked (N/A)
};

// One "#  Rank ..." line of the header.
struct DeviceLine {
  int rank = 0;
  int group = 0;
  int pid = 0;
  std::string host;
  int device = CHORUS_DEVICE_HOST;
  std::string info;
};
std::string formatDeviceLine(const DeviceLine& d);
bool parseDeviceLine(const std::string& line, DeviceLine* d);

// Prints nccl-tests' text and, with -J, writes the same results as JSON. Only process 0's main thread owns one.
class Report {
 public:
  Report(const Options& opts, const Collective& coll);
  ~Report();
  void header(int nThreads, int nGpus, const std::string& backendLine);
  void devices(const std::vector<DeviceLine>& lines);
  void tableHeader();
  void rowStart(size_t bytes, size_t count, const char* type, const char* op, int root);
  void rowHalf(const HalfResult& r, bool outOfPlace);
  void rowCompare(const HalfResult& mpi, double ratio, bool outOfPlace);
  void rowEnd();
  // minBw < 0: no NCCL_TESTS_MIN_BW check.
  void footer(int errors, double avgBw, double minBw);

 private:
  void json(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  void jsonHalf(const char* key, const HalfResult& r);

  const Options& opts_;
  const Collective& coll_;
  FILE* json_ = nullptr;
  bool firstRow_ = true;
  HalfResult pending_[2];  // MPI results of the current row (--compare), written with the row's end
  double pendingRatio_[2] = {0, 0};
  bool hasCompare_ = false;
};

// One rank driven by a thread.
struct Buffer {
  void* ptr = nullptr;
  size_t bytes = 0;
  bool fromChorus = false;  // chorusMemAlloc
  void* registration = nullptr;
};

struct RankState {
  int rank = 0;
  chorusComm_t comm = nullptr;
  chorusStream_t stream = nullptr;
  Buffer send;
  Buffer recv;
  Buffer expected;
};

struct ThreadContext {
  int thread = 0;
  int nranks = 0;  // in the whole benchmark
  const Options* opts = nullptr;
  const Collective* coll = nullptr;
  Team* team = nullptr;
  Report* report = nullptr;  // set on process 0's thread 0
  std::vector<RankState> ranks;
  // Results, identical on every thread (all values are reduced over ranks).
  double busBwSum = 0;
  int busBwCount = 0;
  int errors = 0;  // halves with wrong elements
};

// Runs every cycle, type, operation, root and size; returns when done (errors end the process).
void runThread(ThreadContext& ctx);

// -T: restarts the deadline (at each test); a missed deadline aborts the communicators and exits with status 3.
void watchdogStart(int timeoutSec, const char* programName);
void watchdogWatch(chorusComm_t comm);
void watchdogArm();
void watchdogStop();

// Prints "<program>: <message>" and ends the process with status 1 (or lets a firing watchdog end it).
[[noreturn]] void fatal(const std::string& message);
void checkChorus(chorusResult_t result, const char* call, const RankState& rank);

// Buffers: 64-byte aligned and touched; with -R 1 from chorusMemAlloc (malloc after a warning if it fails).
Buffer allocBuffer(size_t bytes, bool useChorus, bool* warned);
void freeBuffer(Buffer* buffer);

}  // namespace chorus::perf

#endif  // CHORUS_PERF_NCCL_DRIVER_H_
