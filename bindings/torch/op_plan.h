// One c10d operation as Chorus calls plus the host-side steps around them. A plan is built (and validated)
// on the calling thread; the queue that runs it decides when: at once, or deferred into a group (point-to-
// point operations and coalesced batches), after earlier work when its host steps touch user tensors.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "chorus/chorus.h"
#include "tensor_util.h"

namespace chorus_torch {

struct OpPlan {
  OpPlan(c10d::OpType type_, const char* title, std::vector<at::Tensor> inputs_,
         std::vector<std::vector<at::Tensor>> outputs_)
      : type(type_), profilingTitle(title), inputs(std::move(inputs_)), outputs(std::move(outputs_)) {}

  c10d::OpType type = c10d::OpType::UNKNOWN;
  // The profiler's name of the operation, "chorus:all_reduce" (as Gloo's "gloo:all_reduce").
  const char* profilingTitle = nullptr;
  std::vector<at::Tensor> inputs;  // for the profiler

  // Host-side preparation run just before the calls are issued: copies into contiguous staging buffers,
  // a pre-multiplication. It reads user tensors, so the queue first completes earlier operations.
  std::function<void()> prologue;
  // The Chorus calls, all on `comm` and `stream` (inside a group when the queue groups operations).
  std::function<void(chorusComm_t comm, chorusStream_t stream)> issue;
  // Host-side completion run once the calls are done, before the work reports completion: copies from
  // staging buffers into the user's tensors, a local reduction of gathered values.
  std::function<void()> epilogue;

  // The future's value (Gloo's convention: one list -> that list, several -> the list of lists).
  std::vector<std::vector<at::Tensor>> outputs;
  // Buffers the calls read or write that nobody else keeps alive (staging copies).
  std::vector<at::Tensor> keepAlive;
  // Send or receive: deferred into a group with the point-to-point operations that follow it, so that an
  // isend and an irecv issued back to back on two ranks cannot block each other.
  bool pointToPoint = false;
  // Several Chorus calls in `issue`: issued inside one group, so that they are all launched or none is.
  bool groupCalls = false;
  // The source rank a receive reports (Work::sourceRank); -1 when not a receive, or not known yet (a
  // receive from any source learns it when it is issued).
  std::shared_ptr<std::atomic<int>> sourceRank = std::make_shared<std::atomic<int>>(-1);

  bool needsOrder() const { return static_cast<bool>(prologue); }
};

// Wires one staged input and one staged output into plan: the input is copied in by the prologue, the
// output out by the epilogue (nothing for tensors used as they are); both buffers are kept alive.
inline void stageThrough(OpPlan& plan, const Staged& in, const Staged& out) {
  plan.keepAlive.push_back(in.buffer);
  plan.keepAlive.push_back(out.buffer);
  if (in.copy()) plan.prologue = [in] { in.buffer.copy_(in.user); };
  if (out.copy()) plan.epilogue = [out] { out.user.copy_(out.buffer); };
}

}  // namespace chorus_torch
