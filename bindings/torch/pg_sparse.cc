// Sparse (COO) allreduce of ProcessGroupChorus, as Gloo's: every rank's indices and values are gathered and
// summed locally. The sizes of the second exchange come from the first (each rank's number of non-zeros), so
// it runs at once on the calling thread (OpQueue::runNow) rather than on the stream.
#include <c10/util/Exception.h>

#include "chorus_error.h"
#include "process_group_chorus.h"
#include "tensor_util.h"

namespace chorus_torch {

namespace {

// All-gathers `t` (contiguous) from every rank into a new [n, t's shape] tensor, blocking.
at::Tensor allGatherNow(const at::Tensor& t, int n, chorusComm_t comm) {
  std::vector<int64_t> shape{n};
  shape.insert(shape.end(), t.sizes().begin(), t.sizes().end());
  at::Tensor out = at::empty(shape, t.options().memory_format(at::MemoryFormat::Contiguous));
  checkChorus(chorusAllGather(t.data_ptr(), out.data_ptr(), byteSize(t), chorusUint8, comm, nullptr), comm,
              "chorus: sparse allreduce: chorusAllGather");
  return out;
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allreduceSparse(std::vector<at::Tensor>& tensors,
                                                                   const c10d::AllreduceOptions& opts) {
  TORCH_CHECK(tensors.size() == 1, "allreduce: sparse tensors take one tensor per process");
  TORCH_CHECK(opts.reduceOp.op_ == c10d::ReduceOp::SUM, "allreduce: sparse tensors support ReduceOp.SUM only");
  const at::Tensor target = tensors[0];
  TORCH_CHECK(target.layout() == at::kSparse, "allreduce: expected a sparse COO tensor, got layout ", target.layout());
  TORCH_CHECK(target.device().is_cpu(), "allreduce: sparse tensors are reduced on the CPU by chorus, got ",
              target.device());
  OpPlan plan(c10d::OpType::ALLREDUCE, "chorus:sparse_all_reduce", tensors, {tensors});
  ++seq_;
  const int n = size_;
  return host_->runNow(std::move(plan), [target, n](chorusComm_t comm) {
    const at::Tensor local = target.coalesce();
    const at::Tensor indices = local._indices().contiguous();  // [sparseDims, nnz], int64
    const at::Tensor values = local._values().contiguous();    // [nnz, dense dims...]
    const at::Tensor counts = allGatherNow(at::full({1}, local._nnz(), at::kLong), n, comm).view(-1);
    const int64_t most = counts.max().item<int64_t>();
    // Every rank sends `most` entries (zero-padded), so one all-gather of fixed size carries them.
    std::vector<int64_t> valueShape = values.sizes().vec();
    valueShape[0] = most;
    at::Tensor paddedIndices = at::zeros({indices.size(0), most}, indices.options());
    at::Tensor paddedValues = at::zeros(valueShape, values.options());
    paddedIndices.narrow(1, 0, indices.size(1)).copy_(indices);
    paddedValues.narrow(0, 0, values.size(0)).copy_(values);
    const at::Tensor allIndices = allGatherNow(paddedIndices, n, comm);
    const at::Tensor allValues = allGatherNow(paddedValues, n, comm);
    std::vector<at::Tensor> idx;
    std::vector<at::Tensor> val;
    for (int r = 0; r < n; ++r) {
      const int64_t k = counts[r].item<int64_t>();
      idx.push_back(allIndices[r].narrow(1, 0, k));
      val.push_back(allValues[r].narrow(0, 0, k));
    }
    const at::Tensor sum = at::sparse_coo_tensor(at::cat(idx, 1), at::cat(val, 0), target.sizes()).coalesce();
    target.copy_(sum);
  });
}

}  // namespace chorus_torch
