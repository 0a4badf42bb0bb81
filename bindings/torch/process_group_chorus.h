// ProcessGroupChorus: the c10d backend "chorus". Each process group (the default one and every new_group)
// owns its own Chorus communicator, created from a unique id that rank 0 publishes in the group's store,
// with PyTorch's timeout as the communicator's deadline (chorusConfig_t.timeoutMs). CPU tensors run on the
// host communicator's ordered queue (OpQueue: a host stream, asynchronous works); CUDA tensors run on a CUDA
// communicator of the tensor's device, created on first use (CudaRoute).
//
// Uses only the public header chorus/chorus.h.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <memory>

#include "op_plan.h"
#include "op_queue.h"

namespace chorus_torch {

class AnySourceLedger;
class CudaRoute;

class ProcessGroupChorus : public c10d::ProcessGroup {
 public:
  // Collective over the group's ranks: joins (rank 0 creates) the group's communicator.
  ProcessGroupChorus(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                     std::chrono::milliseconds timeout);
  ~ProcessGroupChorus() override;

  const std::string getBackendName() const override { return "chorus"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts = c10d::BroadcastOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts = c10d::AllreduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors,
      const c10d::AllreduceCoalescedOptions& opts = c10d::AllreduceCoalescedOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts = c10d::ReduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputTensors,
                                           std::vector<at::Tensor>& inputTensors,
                                           const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(
      at::Tensor& outputBuffer, at::Tensor& inputBuffer,
      const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>>& outputTensorLists, std::vector<at::Tensor>& inputTensors,
      const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputTensors,
                                        std::vector<at::Tensor>& inputTensors,
                                        const c10d::GatherOptions& opts = c10d::GatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputTensors,
                                         std::vector<std::vector<at::Tensor>>& inputTensors,
                                         const c10d::ScatterOptions& opts = c10d::ScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(
      std::vector<at::Tensor>& outputTensors, std::vector<std::vector<at::Tensor>>& inputTensors,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& outputBuffer, at::Tensor& inputBuffer,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& outputBuffer, at::Tensor& inputBuffer,
                                               std::vector<int64_t>& outputSplitSizes,
                                               std::vector<int64_t>& inputSplitSizes,
                                               const c10d::AllToAllOptions& opts = c10d::AllToAllOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputTensors, std::vector<at::Tensor>& inputTensors,
                                          const c10d::AllToAllOptions& opts = c10d::AllToAllOptions()) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts = c10d::BarrierOptions()) override;
  void monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks = false) override;

  void startCoalescing() override;
  void endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>& reqs) override;

  void setSequenceNumberForGroup() override;
  uint64_t getSequenceNumberForGroup() override;

  // The communicator's deadline in milliseconds (PyTorch's timeout).
  int64_t timeoutMs() const { return timeout_.count(); }
  // Blocks until every operation issued so far has completed (used by tests and at destruction).
  void synchronize();

 private:
  // Runs a plan on the communicator of `sample`'s device (host queue, or the CUDA route).
  c10::intrusive_ptr<c10d::Work> run(OpPlan plan, const at::Tensor& sample);
  chorusComm_t hostComm() const { return host_->comm(); }
  c10::intrusive_ptr<c10d::Work> allreduceSparse(std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts);
  // A plan whose reduction Chorus lacks: all-gather `input` into a [size, n] scratch, fold it locally in
  // rank order into the part of it `finish` is given (root only for reduce).
  void planGatherFold(OpPlan& plan, const at::Tensor& input, c10d::ReduceOp::RedOpType foldOp, int64_t root,
                      std::function<void(const at::Tensor& folded)> finish);

  c10::intrusive_ptr<c10d::Store> store_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<OpQueue> host_;
  std::unique_ptr<CudaRoute> cuda_;
  std::shared_ptr<AnySourceLedger> anySource_;  // CHORUS_TORCH_ANY_SOURCE=1 only
  uint64_t seq_ = 0;  // c10d's sequence number (set by setSequenceNumberForGroup, +1 per operation)
  uint64_t monitoredBarriers_ = 0;
};

// The constructor wrapped for torch.distributed.Backend.register_backend.
c10::intrusive_ptr<c10d::ProcessGroup> createProcessGroupChorus(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                                int size, std::chrono::milliseconds timeout);

}  // namespace chorus_torch
