// The reducing operations of ProcessGroupChorus: allreduce, allreduce_coalesced, reduce, reduce_scatter,
// _reduce_scatter_base. Each is one Chorus reduction when Chorus has the op and type (reduction.h), else an
// all-gather (or gather) folded locally.
#include <c10/util/Exception.h>

#include "chorus_error.h"
#include "process_group_chorus.h"
#include "reduction.h"
#include "tensor_util.h"

namespace chorus_torch {

namespace {

// Joins a host step before or after another one (either may be empty).
std::function<void()> then(std::function<void()> first, std::function<void()> second) {
  if (!first) return second;
  if (!second) return first;
  return [first = std::move(first), second = std::move(second)] {
    first();
    second();
  };
}

}  // namespace

void ProcessGroupChorus::planGatherFold(OpPlan& plan, const at::Tensor& input, c10d::ReduceOp::RedOpType foldOp,
                                        int64_t root, std::function<void(const at::Tensor& folded)> finish) {
  const int n = size_;
  const int me = rank_;
  at::Tensor gathered = at::empty({n, input.numel()}, input.options().memory_format(at::MemoryFormat::Contiguous));
  plan.keepAlive.push_back(gathered);
  plan.issue = [input, gathered, root](chorusComm_t comm, chorusStream_t stream) {
    if (root < 0) {
      checkChorus(chorusAllGather(input.data_ptr(), gathered.data_ptr(), byteSize(input), chorusUint8, comm, stream),
                  comm, "chorus: chorusAllGather");
    } else {
      checkChorus(chorusGather(input.data_ptr(), gathered.data_ptr(), byteSize(input), chorusUint8,
                               static_cast<int>(root), comm, stream),
                  comm, "chorus: chorusGather");
    }
  };
  plan.epilogue = then(
      [gathered, foldOp, root, me, sizes = input.sizes().vec(), finish = std::move(finish)] {
        if (root >= 0 && me != root) return;
        // Rank order, on every rank: the same bits everywhere.
        at::Tensor acc = gathered[0].clone();
        for (int64_t i = 1; i < gathered.size(0); ++i) fold(acc, gathered[i], foldOp);
        finish(acc.view(sizes));
      },
      std::move(plan.epilogue));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allreduce(std::vector<at::Tensor>& tensors,
                                                             const c10d::AllreduceOptions& opts) {
  if (!tensors.empty() && tensors[0].defined() && tensors[0].layout() == at::kSparse) {
    return allreduceSparse(tensors, opts);
  }
  checkTensors("allreduce", tensors);
  const Reduction r = planReduction("allreduce", opts.reduceOp, tensors[0].scalar_type());
  TORCH_CHECK(tensors.size() == 1 || opts.reduceOp.op_ != c10d::ReduceOp::AVG,
              "allreduce: ReduceOp.AVG takes one tensor per process");
  OpPlan plan(c10d::OpType::ALLREDUCE, "chorus:all_reduce", tensors, {tensors});
  const Staged s = stage(tensors[0]);
  const at::Tensor buf = s.buffer;
  const std::vector<at::Tensor> all = tensors;
  // Several tensors in one process (the multi-device API, here all on one device): reduced locally into the
  // first one, then across ranks, then copied to the others.
  if (s.copy() || all.size() > 1 || r.premul()) {
    plan.prologue = [s, all, r] {
      if (s.copy()) s.buffer.copy_(s.user);
      at::Tensor acc = s.buffer;
      for (size_t i = 1; i < all.size(); ++i) fold(acc, all[i], r.premul() ? c10d::ReduceOp::SUM : r.foldOp);
      premultiply(s.buffer, r);
    };
    plan.keepAlive.push_back(buf);
  }
  if (s.copy() || all.size() > 1) {
    plan.epilogue = [s, all] {
      if (s.copy()) s.user.copy_(s.buffer);
      for (size_t i = 1; i < all.size(); ++i) all[i].copy_(s.user);
    };
  }
  if (r.native) {
    plan.issue = [buf, r](chorusComm_t comm, chorusStream_t stream) {
      checkChorus(chorusAllReduce(buf.data_ptr(), buf.data_ptr(), buf.numel(), r.dtype, r.op, comm, stream), comm,
                  "chorus: chorusAllReduce");
    };
  } else {
    planGatherFold(plan, buf, r.foldOp, -1, [buf](const at::Tensor& folded) { buf.copy_(folded); });
  }
  return run(std::move(plan), tensors[0]);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                       const c10d::AllreduceCoalescedOptions& opts) {
  checkTensors("allreduce_coalesced", tensors, /*sameShape=*/false);
  for (const at::Tensor& t : tensors) {
    TORCH_CHECK(t.scalar_type() == tensors[0].scalar_type(),
                "allreduce_coalesced: tensors must all have the same type");
    TORCH_CHECK(t.device() == tensors[0].device(), "allreduce_coalesced: tensors must all be on the same device");
  }
  const Reduction r = planReduction("allreduce_coalesced", opts.reduceOp, tensors[0].scalar_type());
  OpPlan plan(c10d::OpType::ALLREDUCE_COALESCED, "chorus:all_reduce", tensors, {tensors});
  const at::Tensor flat = flatBuffer(tensors);
  const std::vector<at::Tensor> all = tensors;
  plan.keepAlive.push_back(flat);
  plan.prologue = [flat, all, r] {
    copyIntoFlat(flat, all);
    premultiply(flat, r);
  };
  plan.epilogue = [flat, all] { copyFromFlat(flat, all); };
  if (r.native) {
    plan.issue = [flat, r](chorusComm_t comm, chorusStream_t stream) {
      checkChorus(chorusAllReduce(flat.data_ptr(), flat.data_ptr(), flat.numel(), r.dtype, r.op, comm, stream), comm,
                  "chorus: chorusAllReduce");
    };
  } else {
    planGatherFold(plan, flat, r.foldOp, -1, [flat](const at::Tensor& folded) { flat.copy_(folded); });
  }
  return run(std::move(plan), tensors[0]);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::reduce(std::vector<at::Tensor>& tensors,
                                                          const c10d::ReduceOptions& opts) {
  checkTensors("reduce", tensors);
  TORCH_CHECK(tensors.size() == 1, "reduce: requires a single-element tensor list, got ", tensors.size());
  checkRoot("reduce", opts.rootRank, size_);
  TORCH_CHECK(opts.rootTensor == 0, "reduce: invalid root tensor: ", opts.rootTensor);
  const Reduction r = planReduction("reduce", opts.reduceOp, tensors[0].scalar_type());
  OpPlan plan(c10d::OpType::REDUCE, "chorus:reduce", tensors, {tensors});
  const Staged s = stage(tensors[0]);
  const at::Tensor buf = s.buffer;
  const int root = static_cast<int>(opts.rootRank);
  const bool isRoot = rank_ == root;
  // PREMUL_SUM multiplies a copy: on a non-root rank the tensor is an input only.
  const at::Tensor send = r.premul() && !s.copy() ? at::empty_like(buf, at::MemoryFormat::Contiguous) : buf;
  if (s.copy() || r.premul()) {
    plan.keepAlive = {buf, send};
    plan.prologue = [s, send, r] {
      send.copy_(s.user);
      premultiply(send, r);
    };
  }
  if (s.copy() && isRoot) plan.epilogue = [s] { s.user.copy_(s.buffer); };
  if (r.native) {
    plan.issue = [send, buf, r, root](chorusComm_t comm, chorusStream_t stream) {
      checkChorus(chorusReduce(send.data_ptr(), buf.data_ptr(), buf.numel(), r.dtype, r.op, root, comm, stream), comm,
                  "chorus: chorusReduce");
    };
  } else {
    planGatherFold(plan, send, r.foldOp, root, [buf](const at::Tensor& folded) { buf.copy_(folded); });
  }
  return run(std::move(plan), tensors[0]);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::reduce_scatter(std::vector<at::Tensor>& outputTensors,
                                                                  std::vector<std::vector<at::Tensor>>& inputTensors,
                                                                  const c10d::ReduceScatterOptions& opts) {
  checkTensors("reduce_scatter", outputTensors);
  TORCH_CHECK(outputTensors.size() == 1 && inputTensors.size() == 1,
              "reduce_scatter: requires a single-element output list and input list");
  TORCH_CHECK(static_cast<int>(inputTensors[0].size()) == size_, "reduce_scatter: the input list must hold ", size_,
              " tensors (one per rank), got ", inputTensors[0].size());
  const at::Tensor out = outputTensors[0];
  checkLike("reduce_scatter", "input tensors", inputTensors[0], out);
  const Reduction r = planReduction("reduce_scatter", opts.reduceOp, out.scalar_type());
  OpPlan plan(c10d::OpType::REDUCE_SCATTER, "chorus:reduce_scatter", inputTensors[0], {outputTensors});
  const std::vector<at::Tensor> ins = inputTensors[0];
  const at::Tensor flat = flatBuffer(ins);
  const Staged s = stage(out);
  plan.keepAlive = {flat, s.buffer};
  plan.prologue = [flat, ins, r] {
    copyIntoFlat(flat, ins);
    premultiply(flat, r);
  };
  if (s.copy()) plan.epilogue = [s] { s.user.copy_(s.buffer); };
  const at::Tensor buf = s.buffer;
  if (r.native) {
    plan.issue = [flat, buf, r](chorusComm_t comm, chorusStream_t stream) {
      checkChorus(chorusReduceScatter(flat.data_ptr(), buf.data_ptr(), buf.numel(), r.dtype, r.op, comm, stream), comm,
                  "chorus: chorusReduceScatter");
    };
  } else {
    const int64_t chunk = out.numel();
    const int me = rank_;
    planGatherFold(plan, flat, r.foldOp, -1, [buf, chunk, me](const at::Tensor& folded) {
      buf.view(-1).copy_(folded.narrow(0, me * chunk, chunk));
    });
  }
  return run(std::move(plan), out);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::_reduce_scatter_base(at::Tensor& outputBuffer,
                                                                        at::Tensor& inputBuffer,
                                                                        const c10d::ReduceScatterOptions& opts) {
  checkTensors("_reduce_scatter_base", {outputBuffer, inputBuffer}, /*sameShape=*/false);
  TORCH_CHECK(inputBuffer.scalar_type() == outputBuffer.scalar_type(),
              "_reduce_scatter_base: input and output must have the same type");
  TORCH_CHECK(inputBuffer.numel() == outputBuffer.numel() * size_,
              "_reduce_scatter_base: input tensor must be the same size as output size times world size (",
              inputBuffer.numel(), " != ", outputBuffer.numel(), " * ", size_, ")");
  const Reduction r = planReduction("_reduce_scatter_base", opts.reduceOp, outputBuffer.scalar_type());
  OpPlan plan(c10d::OpType::_REDUCE_SCATTER_BASE, "chorus:reduce_scatter_tensor", {inputBuffer}, {{outputBuffer}});
  Staged in = stage(inputBuffer);
  if (r.premul() && !in.copy()) in.buffer = at::empty_like(inputBuffer, at::MemoryFormat::Contiguous);
  const Staged out = stage(outputBuffer);
  stageThrough(plan, in, out);
  if (r.premul()) {
    plan.prologue = [in, r] {
      in.buffer.copy_(in.user);
      premultiply(in.buffer, r);
    };
  }
  const at::Tensor src = in.buffer;
  const at::Tensor dst = out.buffer;
  if (r.native) {
    plan.issue = [src, dst, r](chorusComm_t comm, chorusStream_t stream) {
      checkChorus(chorusReduceScatter(src.data_ptr(), dst.data_ptr(), dst.numel(), r.dtype, r.op, comm, stream), comm,
                  "chorus: chorusReduceScatter");
    };
  } else {
    const int64_t chunk = dst.numel();
    const int me = rank_;
    planGatherFold(plan, src.view(-1), r.foldOp, -1, [dst, chunk, me](const at::Tensor& folded) {
      dst.view(-1).copy_(folded.view(-1).narrow(0, me * chunk, chunk));
    });
  }
  return run(std::move(plan), outputBuffer);
}

}  // namespace chorus_torch
