// CudaRoute for a PyTorch with CUDA. Compiled in every build that finds the CUDA toolkit (so it stays
// compiling), linked into chorus_torch only when PyTorch's libc10_cuda exists.
#include "cuda_route.h"

#include <ATen/core/ivalue.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>

#include <climits>

#include "chorus_error.h"
#include "chorus_work.h"

namespace chorus_torch {

namespace {

void checkCuda(cudaError_t e, const char* what) {
  TORCH_CHECK(e == cudaSuccess, "chorus: ", what, ": ", cudaGetErrorString(e));
}

// A work on a CUDA stream: complete when the event recorded after its calls has passed; errors inside the
// kernels come from the communicator's asynchronous error.
class CudaWork : public c10d::Work {
 public:
  CudaWork(int rank, const OpPlan& plan, chorusComm_t comm, cudaStream_t stream, const at::Device& device)
      : c10d::Work(rank, plan.type, plan.profilingTitle,
                   plan.profilingTitle != nullptr ? c10::optional<std::vector<at::Tensor>>(plan.inputs) : c10::nullopt),
        comm_(comm),
        outputs_(plan.outputs),
        keepAlive_(plan.keepAlive) {
    checkCuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate");
    checkCuda(cudaEventRecord(event_, stream), "cudaEventRecord");
    // The value is ready in stream order: a CUDA-aware future records its own events on the current streams.
    future_ = c10::make_intrusive<c10::ivalue::Future>(makeOutputFuture(outputs_)->elementType(),
                                                       std::vector<c10::Device>{device});
    markOutputFuture(*future_, outputs_);
  }
  ~CudaWork() override { (void)cudaEventDestroy(event_); }

  bool isCompleted() override {
    const cudaError_t e = cudaEventQuery(event_);
    if (e == cudaErrorNotReady) return false;
    finishOnce(e);
    return true;
  }
  bool wait(std::chrono::milliseconds timeout) override {
    if (timeout == kNoTimeout) finishOnce(cudaEventSynchronize(event_));
    return c10d::Work::wait(timeout);
  }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }
  std::vector<at::Tensor> result() override { return outputs_.empty() ? std::vector<at::Tensor>() : outputs_[0]; }

 private:
  void finishOnce(cudaError_t e) {
    if (c10d::Work::isCompleted()) return;
    std::exception_ptr error;
    chorusResult_t async = chorusSuccess;
    if (e != cudaSuccess) {
      error = std::make_exception_ptr(std::runtime_error(std::string("chorus: CUDA: ") + cudaGetErrorString(e)));
    } else if (chorusCommGetAsyncError(comm_, &async) == chorusSuccess && async != chorusSuccess &&
               async != chorusInProgress) {
      error = std::make_exception_ptr(std::runtime_error("chorus: " + chorusMessage(async, comm_)));
    }
    keepAlive_.clear();
    finish(error);
  }

  chorusComm_t comm_;
  cudaEvent_t event_ = nullptr;
  std::vector<std::vector<at::Tensor>> outputs_;
  std::vector<at::Tensor> keepAlive_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace

CudaRoute::CudaRoute(int rank, std::chrono::milliseconds timeout) : rank_(rank), timeout_(timeout) {}

CudaRoute::~CudaRoute() {
  for (auto& [device, comm] : comms_) {
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
    (void)chorusCommFinalize(comm);
    (void)chorusCommDestroy(comm);
  }
}

bool CudaRoute::built() {
  return true;
}

c10::intrusive_ptr<c10d::Work> CudaRoute::run(OpPlan plan, const at::Device& device, chorusComm_t host,
                                              const std::function<void()>& quiesceHost) {
  const int index = device.index() < 0 ? 0 : device.index();
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(index));
  auto it = comms_.find(index);
  if (it == comms_.end()) {
    TORCH_CHECK(!plan.pointToPoint, "chorus: the CUDA communicator of ", device,
                " is made by the first collective on its tensors (every rank takes part); issue one (e.g. an "
                "all_reduce of a CUDA tensor) before sends and receives");
    quiesceHost();
    chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
    config.device = index;
    config.timeoutMs = static_cast<int>(std::min<int64_t>(timeout_.count(), INT_MAX));
    chorusComm_t comm = nullptr;
    checkChorus(chorusCommSplit(host, 0, rank_, &comm, &config), host, "chorus: creating the CUDA communicator");
    it = comms_.emplace(index, comm).first;
  }
  chorusComm_t comm = it->second;
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(index)).stream();
  // Host steps here are torch operations on the current stream: they are ordered like the calls.
  if (plan.prologue) plan.prologue();
  const bool grouped = plan.pointToPoint || plan.groupCalls;
  if (grouped) checkChorus(chorusGroupStart(), comm, "chorus: chorusGroupStart");
  try {
    plan.issue(comm, stream);
  } catch (...) {
    if (grouped) (void)chorusGroupEnd();
    throw;
  }
  if (grouped) checkChorus(chorusGroupEnd(), comm, "chorus: chorusGroupEnd");
  if (plan.epilogue) plan.epilogue();
  return c10::make_intrusive<CudaWork>(rank_, plan, comm, stream, device);
}

}  // namespace chorus_torch
