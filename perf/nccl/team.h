// The ranks of one benchmark: threads of this process (a barrier and reductions among them, as nccl-tests'
// Barrier and Allreduce) on top of a ProcessGroup that joins the processes (MPI, or Chorus itself under
// chorusrun, or nothing when there is one process).
#ifndef CHORUS_PERF_NCCL_TEAM_H_
#define CHORUS_PERF_NCCL_TEAM_H_

#include <chorus/chorus.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace chorus::perf {

// How per-rank values combine: -a's 0..3, plus a plain sum for error counts.
enum class ReduceMode { kRank0 = 0, kAvg = 1, kMin = 2, kMax = 3, kSum = 4 };

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int size() const = 0;
  virtual int rank() const = 0;
  virtual void barrier() = 0;
  // Combines one value per process; kAvg sums (the caller divides), kRank0 takes process 0's.
  virtual void allreduce(double* value, ReduceMode mode) = 0;
  virtual void allreduce(int64_t* value, ReduceMode mode) = 0;
};

// One process: nothing to join.
class SingleProcess : public ProcessGroup {
 public:
  int size() const override { return 1; }
  int rank() const override { return 0; }
  void barrier() override {}
  void allreduce(double*, ReduceMode) override {}
  void allreduce(int64_t*, ReduceMode) override {}
};

// Processes joined by a Chorus communicator of one rank per process (under chorusrun, without MPI). Uses
// blocking collectives on the NULL stream; a failure is fatal.
class ChorusProcessGroup : public ProcessGroup {
 public:
  explicit ChorusProcessGroup(chorusComm_t comm);
  int size() const override { return size_; }
  int rank() const override { return rank_; }
  void barrier() override;
  void allreduce(double* value, ReduceMode mode) override;
  void allreduce(int64_t* value, ReduceMode mode) override;

 private:
  chorusComm_t comm_;
  int size_ = 1;
  int rank_ = 0;
};

class Team {
 public:
  Team(int nThreads, ProcessGroup* processes) : nThreads_(nThreads), processes_(processes) {}
  int nThreads() const { return nThreads_; }
  ProcessGroup* processes() const { return processes_; }

  // Every thread of every process calls these in the same order.
  void barrier(int thread);
  double reduce(int thread, double value, ReduceMode mode);
  int64_t reduce(int thread, int64_t value, ReduceMode mode);

 private:
  template <typename T>
  struct Slot {
    T acc{};
    T result{};
  };
  Slot<double>& slot(double*) { return doubles_; }
  Slot<int64_t>& slot(int64_t*) { return ints_; }
  template <typename T>
  T reduceImpl(int thread, T value, ReduceMode mode);

  const int nThreads_;
  ProcessGroup* const processes_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  Slot<double> doubles_;
  Slot<int64_t> ints_;
};

}  // namespace chorus::perf

#endif  // CHORUS_PERF_NCCL_TEAM_H_
