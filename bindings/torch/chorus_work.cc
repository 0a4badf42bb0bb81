#include "chorus_work.h"

#include <ATen/core/jit_type.h>

#include "op_queue.h"

namespace chorus_torch {

c10::intrusive_ptr<c10::ivalue::Future> makeOutputFuture(const std::vector<std::vector<at::Tensor>>& outputs) {
  if (outputs.size() > 1) {
    return c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::ListType::ofTensors()));
  }
  return c10::make_intrusive<c10::ivalue::Future>(c10::ListType::ofTensors());
}

void markOutputFuture(c10::ivalue::Future& future, const std::vector<std::vector<at::Tensor>>& outputs) {
  if (outputs.empty()) {
    future.markCompleted(c10::IValue(std::vector<at::Tensor>()));
  } else if (outputs.size() > 1) {
    future.markCompleted(c10::IValue(outputs));
  } else {
    future.markCompleted(c10::IValue(outputs[0]));
  }
}

ChorusWork::ChorusWork(int rank, OpPlan plan, std::shared_ptr<OpQueue> queue)
    : c10d::Work(rank, plan.type, plan.profilingTitle,
                 plan.profilingTitle != nullptr ? c10::optional<std::vector<at::Tensor>>(plan.inputs) : c10::nullopt),
      plan_(std::move(plan)),
      queue_(std::move(queue)),
      future_(makeOutputFuture(plan_.outputs)) {}

ChorusWork::~ChorusWork() = default;

bool ChorusWork::isCompleted() {
  return queue_->poll(*this);
}

bool ChorusWork::wait(std::chrono::milliseconds timeout) {
  if (timeout == kNoTimeout) {
    queue_->wait(*this);
  } else {
    // The completer thread finishes the work; this thread waits on it for at most `timeout`.
    queue_->watch(*this);
  }
  return c10d::Work::wait(timeout);  // rethrows the operation's error; "Operation timed out!" after timeout
}

c10::intrusive_ptr<c10::ivalue::Future> ChorusWork::getFuture() {
  queue_->watch(*this);
  return future_;
}

std::vector<at::Tensor> ChorusWork::result() {
  std::vector<at::Tensor> flat;
  for (const auto& list : plan_.outputs) flat.insert(flat.end(), list.begin(), list.end());
  return flat;
}

int ChorusWork::sourceRank() const {
  const int source = plan_.sourceRank->load();
  TORCH_CHECK(source >= 0, "sourceRank() is only available on the work of a completed receive");
  return source;
}

void ChorusWork::abort() {
  TORCH_CHECK(false, "chorus: a single operation cannot be aborted; destroy the process group instead");
}

void ChorusWork::finishOnQueue(std::exception_ptr error) {
  if (error == nullptr && plan_.epilogue) {
    try {
      plan_.epilogue();
    } catch (...) {
      error = std::current_exception();
    }
  }
  // Staging buffers are no longer needed once the results are in the user's tensors.
  plan_.keepAlive.clear();
  plan_.prologue = nullptr;
  plan_.issue = nullptr;
  plan_.epilogue = nullptr;
  finish(error);
}

void ChorusWork::completeFuture() {
  std::exception_ptr error = exception();
  if (error != nullptr) {
    future_->setError(error);
  } else {
    markOutputFuture(*future_, plan_.outputs);
  }
}

}  // namespace chorus_torch
