// The data-moving collectives of ProcessGroupChorus: broadcast, allgather, _allgather_base,
// allgather_coalesced, gather, scatter. Data moves as bytes (chorusUint8), so every tensor type works; list
// arguments go through one contiguous buffer, copied in by the prologue or out by the epilogue.
#include <c10/util/Exception.h>

#include "chorus_error.h"
#include "process_group_chorus.h"
#include "tensor_util.h"

namespace chorus_torch {

namespace {

// Checks c10d's allgather-style output list: `outputs` holds `size` tensors like `input`.
void checkOutputList(const char* op, const std::vector<at::Tensor>& outputs, const at::Tensor& input, int size) {
  TORCH_CHECK(static_cast<int>(outputs.size()) == size, op, ": the output list must hold ", size,
              " tensors (one per rank), got ", outputs.size());
  checkLike(op, "output tensors", outputs, input);
}

// Copies the rows of `gathered` ([n, k]) into the n tensors of `outputs` (each k elements).
void scatterRows(const at::Tensor& gathered, const std::vector<at::Tensor>& outputs) {
  for (size_t j = 0; j < outputs.size(); ++j)
    outputs[j].copy_(gathered[static_cast<int64_t>(j)].view(outputs[j].sizes()));
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::broadcast(std::vector<at::Tensor>& tensors,
                                                             const c10d::BroadcastOptions& opts) {
  checkTensors("broadcast", tensors);
  checkRoot("broadcast", opts.rootRank, size_);
  TORCH_CHECK(opts.rootTensor >= 0 && opts.rootTensor < static_cast<int64_t>(tensors.size()),
              "broadcast: invalid root tensor: ", opts.rootTensor);
  OpPlan plan(c10d::OpType::BROADCAST, "chorus:broadcast", tensors, {tensors});
  const int root = static_cast<int>(opts.rootRank);
  const bool isRoot = rank_ == root;
  const Staged s = stage(tensors[opts.rootTensor]);
  const std::vector<at::Tensor> all = tensors;
  if (s.copy()) plan.keepAlive.push_back(s.buffer);
  if (s.copy() && isRoot) plan.prologue = [s] { s.buffer.copy_(s.user); };
  if ((s.copy() && !isRoot) || all.size() > 1) {
    plan.epilogue = [s, all, isRoot] {
      if (s.copy() && !isRoot) s.user.copy_(s.buffer);
      for (const at::Tensor& t : all) {
        if (!t.is_same(s.user)) t.copy_(s.user);
      }
    };
  }
  const at::Tensor buf = s.buffer;
  plan.issue = [buf, root](chorusComm_t comm, chorusStream_t stream) {
    checkChorus(chorusBroadcast(buf.data_ptr(), buf.data_ptr(), byteSize(buf), chorusUint8, root, comm, stream), comm,
                "chorus: chorusBroadcast");
  };
  return run(std::move(plan), tensors[0]);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allgather(std::vector<std::vector<at::Tensor>>& outputTensors,
                                                             std::vector<at::Tensor>& inputTensors,
                                                             const c10d::AllgatherOptions& /*opts*/) {
  checkTensors("allgather", inputTensors);
  TORCH_CHECK(outputTensors.size() == inputTensors.size(),
              "allgather: requires input/output tensor lists to have the same length");
  for (size_t i = 0; i < inputTensors.size(); ++i) {
    checkOutputList("allgather", outputTensors[i], inputTensors[i], size_);
  }
  OpPlan plan(c10d::OpType::ALLGATHER, "chorus:all_gather", inputTensors, outputTensors);
  std::vector<Staged> ins;
  std::vector<at::Tensor> gathered;
  for (const at::Tensor& in : inputTensors) {
    ins.push_back(stage(in));
    gathered.push_back(at::empty({size_, in.numel()}, in.options().memory_format(at::MemoryFormat::Contiguous)));
    plan.keepAlive.push_back(ins.back().buffer);
    plan.keepAlive.push_back(gathered.back());
  }
  plan.groupCalls = ins.size() > 1;
  bool staged = false;
  for (const Staged& s : ins) staged = staged || s.copy();
  if (staged) {
    plan.prologue = [ins] {
      for (const Staged& s : ins) {
        if (s.copy()) s.buffer.copy_(s.user);
      }
    };
  }
  const std::vector<std::vector<at::Tensor>> outs = outputTensors;
  plan.epilogue = [gathered, outs] {
    for (size_t i = 0; i < outs.size(); ++i) scatterRows(gathered[i], outs[i]);
  };
  plan.issue = [ins, gathered](chorusComm_t comm, chorusStream_t stream) {
    for (size_t i = 0; i < ins.size(); ++i) {
      checkChorus(chorusAllGather(ins[i].buffer.data_ptr(), gathered[i].data_ptr(), byteSize(ins[i].buffer),
                                  chorusUint8, comm, stream),
                  comm, "chorus: chorusAllGather");
    }
  };
  return run(std::move(plan), inputTensors[0]);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::_allgather_base(at::Tensor& outputBuffer, at::Tensor& inputBuffer,
                                                                   const c10d::AllgatherOptions& /*opts*/) {
  checkTensors("_allgather_base", {outputBuffer, inputBuffer}, /*sameShape=*/false);
  TORCH_CHECK(inputBuffer.scalar_type() == outputBuffer.scalar_type(),
              "_allgather_base: input and output must have the same type");
  TORCH_CHECK(outputBuffer.numel() == inputBuffer.numel() * size_,
              "_allgather_base: output tensor size must be equal to world_size times input tensor size (",
              outputBuffer.numel(), " != ", inputBuffer.numel(), " * ", size_, ")");
  OpPlan plan(c10d::OpType::_ALLGATHER_BASE, "chorus:all_gather_into_tensor", {inputBuffer}, {{outputBuffer}});
  const Staged in = stage(inputBuffer);
  const Staged out = stage(outputBuffer);
  stageThrough(plan, in, out);
  plan.issue = [src = in.buffer, dst = out.buffer](chorusComm_t comm, chorusStream_t stream) {
    checkChorus(chorusAllGather(src.data_ptr(), dst.data_ptr(), byteSize(src), chorusUint8, comm, stream), comm,
                "chorus: chorusAllGather");
  };
  return run(std::move(plan), inputBuffer);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputTensorLists, std::vector<at::Tensor>& inputTensors,
    const c10d::AllgatherOptions& /*opts*/) {
  checkTensors("allgather_coalesced", inputTensors, /*sameShape=*/false);
  for (const at::Tensor& t : inputTensors) {
    TORCH_CHECK(t.scalar_type() == inputTensors[0].scalar_type() && t.device() == inputTensors[0].device(),
                "allgather_coalesced: input tensors must all have the same type and device");
  }
  TORCH_CHECK(static_cast<int>(outputTensorLists.size()) == size_,
              "allgather_coalesced: requires output tensor list to be a list of lists with length equal to world "
              "size, got ",
              outputTensorLists.size());
  for (const auto& list : outputTensorLists) {
    TORCH_CHECK(list.size() == inputTensors.size(),
                "allgather_coalesced: each output list must have as many tensors as the input list");
    for (size_t i = 0; i < list.size(); ++i)
      checkLike("allgather_coalesced", "output tensors", {list[i]}, inputTensors[i]);
  }
  OpPlan plan(c10d::OpType::ALLGATHER_COALESCED, "chorus:all_gather", inputTensors, outputTensorLists);
  const std::vector<at::Tensor> ins = inputTensors;
  const at::Tensor flat = flatBuffer(ins);
  const at::Tensor gathered = at::empty({size_, flat.numel()}, flat.options());
  plan.keepAlive = {flat, gathered};
  plan.prologue = [flat, ins] { copyIntoFlat(flat, ins); };
  plan.epilogue = [gathered, outs = outputTensorLists] {
    for (size_t r = 0; r < outs.size(); ++r) copyFromFlat(gathered[static_cast<int64_t>(r)], outs[r]);
  };
  plan.issue = [flat, gathered](chorusComm_t comm, chorusStream_t stream) {
    checkChorus(chorusAllGather(flat.data_ptr(), gathered.data_ptr(), byteSize(flat), chorusUint8, comm, stream), comm,
                "chorus: chorusAllGather");
  };
  return run(std::move(plan), inputTensors[0]);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::gather(std::vector<std::vector<at::Tensor>>& outputTensors,
                                                          std::vector<at::Tensor>& inputTensors,
                                                          const c10d::GatherOptions& opts) {
  checkTensors("gather", inputTensors);
  TORCH_CHECK(inputTensors.size() == 1, "gather: requires a single-element input list");
  checkRoot("gather", opts.rootRank, size_);
  const int root = static_cast<int>(opts.rootRank);
  const bool isRoot = rank_ == root;
  const at::Tensor input = inputTensors[0];
  if (isRoot) {
    TORCH_CHECK(outputTensors.size() == 1, "gather: requires a single-element output list on the root");
    checkOutputList("gather", outputTensors[0], input, size_);
  } else {
    TORCH_CHECK(outputTensors.empty(), "gather: requires empty output on non-root");
  }
  OpPlan plan(c10d::OpType::GATHER, "chorus:gather", inputTensors, outputTensors);
  const Staged in = stage(input);
  // Only the root receives: the others pass an empty scratch.
  const at::Tensor gathered =
      at::empty({isRoot ? size_ : 0, input.numel()}, input.options().memory_format(at::MemoryFormat::Contiguous));
  plan.keepAlive = {in.buffer, gathered};
  if (in.copy()) plan.prologue = [in] { in.buffer.copy_(in.user); };
  if (isRoot) plan.epilogue = [gathered, outs = outputTensors[0]] { scatterRows(gathered, outs); };
  plan.issue = [src = in.buffer, gathered, root](chorusComm_t comm, chorusStream_t stream) {
    checkChorus(chorusGather(src.data_ptr(), gathered.data_ptr(), byteSize(src), chorusUint8, root, comm, stream), comm,
                "chorus: chorusGather");
  };
  return run(std::move(plan), input);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::scatter(std::vector<at::Tensor>& outputTensors,
                                                           std::vector<std::vector<at::Tensor>>& inputTensors,
                                                           const c10d::ScatterOptions& opts) {
  checkTensors("scatter", outputTensors);
  TORCH_CHECK(outputTensors.size() == 1, "scatter: requires a single-element output list");
  checkRoot("scatter", opts.rootRank, size_);
  const int root = static_cast<int>(opts.rootRank);
  const bool isRoot = rank_ == root;
  const at::Tensor output = outputTensors[0];
  if (isRoot) {
    TORCH_CHECK(inputTensors.size() == 1, "scatter: requires a single-element input list on the root");
    checkOutputList("scatter", inputTensors[0], output, size_);
  } else {
    TORCH_CHECK(inputTensors.empty(), "scatter: requires empty input on non-root");
  }
  OpPlan plan(c10d::OpType::SCATTER, "chorus:scatter", isRoot ? inputTensors[0] : std::vector<at::Tensor>(),
              {outputTensors});
  const Staged out = stage(output);
  const at::Tensor flat = isRoot ? flatBuffer(inputTensors[0]) : at::empty({0}, output.options());
  plan.keepAlive = {out.buffer, flat};
  if (isRoot) plan.prologue = [flat, ins = inputTensors[0]] { copyIntoFlat(flat, ins); };
  if (out.copy()) plan.epilogue = [out] { out.user.copy_(out.buffer); };
  plan.issue = [flat, dst = out.buffer, root](chorusComm_t comm, chorusStream_t stream) {
    checkChorus(chorusScatter(flat.data_ptr(), dst.data_ptr(), byteSize(dst), chorusUint8, root, comm, stream), comm,
                "chorus: chorusScatter");
  };
  return run(std::move(plan), output);
}

}  // namespace chorus_torch
