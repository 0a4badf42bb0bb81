// The Work object of one c10d operation on a host communicator: completion is tracked by the operation's
// OpQueue (ordered host stream), wait() blocks the caller, isCompleted() polls, getFuture() gives a future
// that the queue completes with the operation's outputs (or its error), as ProcessGroupGloo's do.
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <memory>
#include <vector>

#include "op_plan.h"

namespace chorus_torch {

class OpQueue;

class ChorusWork : public c10d::Work {
 public:
  ChorusWork(int rank, OpPlan plan, std::shared_ptr<OpQueue> queue);
  ~ChorusWork() override;

  bool isCompleted() override;
  bool wait(std::chrono::milliseconds timeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  std::vector<at::Tensor> result() override;
  int sourceRank() const override;
  void abort() override;

 private:
  friend class OpQueue;

  // Called by the queue, in issue order, once the operation's calls are done (exception set on failure):
  // runs the epilogue, then marks the work complete. The future is completed separately, outside the
  // queue's locks, because its callbacks may issue further operations.
  void finishOnQueue(std::exception_ptr error);
  void completeFuture();

  OpPlan plan_;
  std::shared_ptr<OpQueue> queue_;
  uint64_t seq_ = 0;  // position in the queue's issue order; 0 while deferred (not issued yet)
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

// A future of Gloo's type for these outputs: a list of tensors, or a list of lists.
c10::intrusive_ptr<c10::ivalue::Future> makeOutputFuture(const std::vector<std::vector<at::Tensor>>& outputs);
// Completes `future` with `outputs` the way Gloo does (empty list, the one list, or the list of lists).
void markOutputFuture(c10::ivalue::Future& future, const std::vector<std::vector<at::Tensor>>& outputs);

}  // namespace chorus_torch
