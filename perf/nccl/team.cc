#include "team.h"

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace chorus::perf {
namespace {

void checkChorus(chorusResult_t r, const char* what, chorusComm_t comm) {
  if (r == chorusSuccess) return;
  std::fprintf(stderr, "%s failed: %s (%s)\n", what, chorusGetErrorString(r), chorusGetLastError(comm));
  std::fflush(stdout);
  _exit(1);
}

chorusRedOp_t chorusOp(ReduceMode mode) {
  switch (mode) {
    case ReduceMode::kMin: return chorusMin;
    case ReduceMode::kMax: return chorusMax;
    default: return chorusSum;
  }
}

}  // namespace

ChorusProcessGroup::ChorusProcessGroup(chorusComm_t comm) : comm_(comm) {
  checkChorus(chorusCommCount(comm, &size_), "chorusCommCount", comm);
  checkChorus(chorusCommUserRank(comm, &rank_), "chorusCommUserRank", comm);
}

void ChorusProcessGroup::barrier() {
  int32_t token = 0;
  checkChorus(chorusAllReduce(&token, &token, 1, chorusInt32, chorusSum, comm_, nullptr), "chorusAllReduce (barrier)",
              comm_);
}

void ChorusProcessGroup::allreduce(double* value, ReduceMode mode) {
  if (mode == ReduceMode::kRank0 && rank_ != 0) *value = 0;
  checkChorus(chorusAllReduce(value, value, 1, chorusFloat64, chorusOp(mode), comm_, nullptr), "chorusAllReduce",
              comm_);
}

void ChorusProcessGroup::allreduce(int64_t* value, ReduceMode mode) {
  if (mode == ReduceMode::kRank0 && rank_ != 0) *value = 0;
  checkChorus(chorusAllReduce(value, value, 1, chorusInt64, chorusOp(mode), comm_, nullptr), "chorusAllReduce", comm_);
}

void Team::barrier(int thread) {
  reduce(thread, int64_t{0}, ReduceMode::kSum);
}

double Team::reduce(int thread, double value, ReduceMode mode) {
  return reduceImpl(thread, value, mode);
}

int64_t Team::reduce(int thread, int64_t value, ReduceMode mode) {
  return reduceImpl(thread, value, mode);
}

// The last thread to arrive combines across processes and wakes the others. A result stays readable until the
// next reduction completes, which needs every thread, so late readers never see the next one's value.
template <typename T>
T Team::reduceImpl(int thread, T value, ReduceMode mode) {
  Slot<T>& s = slot(static_cast<T*>(nullptr));
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t generation = generation_;
  if (arrived_ == 0) {
    s.acc = value;
  } else {
    switch (mode) {
      case ReduceMode::kRank0: break;
      case ReduceMode::kMin: s.acc = std::min(s.acc, value); break;
      case ReduceMode::kMax: s.acc = std::max(s.acc, value); break;
      default: s.acc += value; break;
    }
  }
  if (mode == ReduceMode::kRank0 && thread == 0) s.acc = value;
  if (++arrived_ == nThreads_) {
    T total = s.acc;
    processes_->allreduce(&total, mode);
    if (mode == ReduceMode::kAvg) total /= static_cast<T>(nThreads_ * processes_->size());
    s.result = total;
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
  } else {
    cv_.wait(lock, [&] { return generation_ != generation; });
  }
  return s.result;
}

}  // namespace chorus::perf
