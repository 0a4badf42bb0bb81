// Point-to-point and all-to-all operations of ProcessGroupChorus. send and recv are deferred by the queue
// and issued in one Chorus group with the point-to-point operations around them (see op_queue.h); tags are
// accepted but not matched: between two ranks, receives match sends in issue order, as in NCCL. Uneven
// all-to-all is a group of sends and receives, one pair per peer.
#include <c10/util/Exception.h>

#include "any_source.h"
#include "chorus_error.h"
#include "process_group_chorus.h"
#include "tensor_util.h"

namespace chorus_torch {

namespace {

void checkPeer(const char* op, int peer, int size) {
  TORCH_CHECK(peer >= 0 && peer < size, op, ": invalid peer rank ", peer, " (the group has ", size, " ranks)");
}

// Byte offsets of consecutive blocks of `splits[i] * rowBytes` bytes.
std::vector<size_t> offsetsOf(const std::vector<int64_t>& splits, size_t rowBytes) {
  std::vector<size_t> offsets(splits.size());
  size_t at = 0;
  for (size_t i = 0; i < splits.size(); ++i) {
    offsets[i] = at;
    at += static_cast<size_t>(splits[i]) * rowBytes;
  }
  return offsets;
}

// c10d's convention: empty split sizes mean equal splits along dimension 0.
std::vector<int64_t> splitsOf(const char* op, const char* what, std::vector<int64_t> splits, const at::Tensor& t,
                              int size) {
  if (splits.empty()) {
    TORCH_CHECK(t.dim() == 0 ? size == 1 : t.size(0) % size == 0, op, ": ", what,
                " tensor's first dimension must be divisible by the group size ", size);
    return std::vector<int64_t>(size, t.dim() == 0 ? 1 : t.size(0) / size);
  }
  TORCH_CHECK(static_cast<int>(splits.size()) == size, op, ": ", what, " split sizes must have ", size,
              " entries, got ", splits.size());
  int64_t total = 0;
  for (int64_t s : splits) {
    TORCH_CHECK(s >= 0, op, ": ", what, " split sizes must not be negative");
    total += s;
  }
  TORCH_CHECK(t.dim() > 0 && total == t.size(0), op, ": ", what,
              " split sizes must sum to the tensor's first "
              "dimension (",
              total, " != ", t.dim() > 0 ? t.size(0) : 0, ")");
  return splits;
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::send(std::vector<at::Tensor>& tensors, int dstRank, int /*tag*/) {
  checkTensors("send", tensors);
  TORCH_CHECK(tensors.size() == 1, "send: requires a single-element tensor list");
  checkPeer("send", dstRank, size_);
  OpPlan plan(c10d::OpType::SEND, "chorus:send", tensors, {tensors});
  plan.pointToPoint = true;
  const Staged s = stage(tensors[0]);
  plan.keepAlive = {s.buffer};
  if (s.copy()) plan.prologue = [s] { s.buffer.copy_(s.user); };
  plan.issue = [buf = s.buffer, dstRank, ledger = anySource_](chorusComm_t comm, chorusStream_t stream) {
    if (ledger) ledger->announceSend(dstRank);
    checkChorus(chorusSend(buf.data_ptr(), byteSize(buf), chorusUint8, dstRank, comm, stream), comm,
                "chorus: chorusSend");
  };
  return run(std::move(plan), tensors[0]);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::recv(std::vector<at::Tensor>& tensors, int srcRank, int /*tag*/) {
  checkTensors("recv", tensors);
  TORCH_CHECK(tensors.size() == 1, "recv: requires a single-element tensor list");
  checkPeer("recv", srcRank, size_);
  OpPlan plan(c10d::OpType::RECV, "chorus:recv", tensors, {tensors});
  plan.pointToPoint = true;
  plan.sourceRank->store(srcRank);
  const Staged s = stage(tensors[0]);
  plan.keepAlive = {s.buffer};
  if (s.copy()) plan.epilogue = [s] { s.user.copy_(s.buffer); };
  plan.issue = [buf = s.buffer, srcRank, ledger = anySource_](chorusComm_t comm, chorusStream_t stream) {
    if (ledger) ledger->countRecv(srcRank);
    checkChorus(chorusRecv(buf.data_ptr(), byteSize(buf), chorusUint8, srcRank, comm, stream), comm,
                "chorus: chorusRecv");
  };
  return run(std::move(plan), tensors[0]);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::recvAnysource(std::vector<at::Tensor>& tensors, int /*tag*/) {
  TORCH_CHECK(anySource_ != nullptr,
              "chorus: recv from any source needs CHORUS_TORCH_ANY_SOURCE=1 when the group is created (Chorus, like "
              "NCCL, matches every receive with a named sender; with the variable set, each send announces itself "
              "through the group's store, at a store round trip per send). Or pass src= to recv/irecv.");
  checkTensors("recv", tensors);
  TORCH_CHECK(tensors.size() == 1, "recv: requires a single-element tensor list");
  OpPlan plan(c10d::OpType::RECVANYSOURCE, "chorus:recvAnySource", tensors, {tensors});
  plan.pointToPoint = true;
  const Staged s = stage(tensors[0]);
  plan.keepAlive = {s.buffer};
  if (s.copy()) plan.epilogue = [s] { s.user.copy_(s.buffer); };
  // The sender is found while issuing, after the sends issued before this receive have announced themselves.
  plan.issue = [buf = s.buffer, ledger = anySource_, source = plan.sourceRank](chorusComm_t comm,
                                                                               chorusStream_t stream) {
    const int src = ledger->claimAnySource();
    source->store(src);
    checkChorus(chorusRecv(buf.data_ptr(), byteSize(buf), chorusUint8, src, comm, stream), comm, "chorus: chorusRecv");
  };
  return run(std::move(plan), tensors[0]);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::alltoall_base(at::Tensor& outputBuffer, at::Tensor& inputBuffer,
                                                                 std::vector<int64_t>& outputSplitSizes,
                                                                 std::vector<int64_t>& inputSplitSizes,
                                                                 const c10d::AllToAllOptions& /*opts*/) {
  checkTensors("alltoall_base", {outputBuffer, inputBuffer}, /*sameShape=*/false);
  TORCH_CHECK(outputBuffer.scalar_type() == inputBuffer.scalar_type(),
              "alltoall_base: input and output must have the same type");
  const bool even = outputSplitSizes.empty() && inputSplitSizes.empty();
  const std::vector<int64_t> inSplits = splitsOf("alltoall_base", "input", inputSplitSizes, inputBuffer, size_);
  const std::vector<int64_t> outSplits = splitsOf("alltoall_base", "output", outputSplitSizes, outputBuffer, size_);
  if (even) {
    TORCH_CHECK(outputBuffer.numel() == inputBuffer.numel(),
                "alltoall_base: input and output must have the same number of elements for equal splits");
  }
  OpPlan plan(c10d::OpType::ALLTOALL_BASE, "chorus:all_to_all", {inputBuffer}, {{outputBuffer}});
  const Staged in = stage(inputBuffer);
  const Staged out = stage(outputBuffer);
  stageThrough(plan, in, out);
  const int n = size_;
  if (even) {
    plan.issue = [src = in.buffer, dst = out.buffer, n](chorusComm_t comm, chorusStream_t stream) {
      checkChorus(chorusAlltoAll(src.data_ptr(), dst.data_ptr(), byteSize(src) / n, chorusUint8, comm, stream), comm,
                  "chorus: chorusAlltoAll");
    };
    return run(std::move(plan), inputBuffer);
  }
  // Elements per row (dimension 0) times the element size, on each side.
  const size_t inRow = inputBuffer.size(0) == 0 ? 0 : byteSize(inputBuffer) / inputBuffer.size(0);
  const size_t outRow = outputBuffer.size(0) == 0 ? 0 : byteSize(outputBuffer) / outputBuffer.size(0);
  plan.issue = [src = in.buffer, dst = out.buffer, inSplits, outSplits, inRow, outRow, n](chorusComm_t comm,
                                                                                          chorusStream_t stream) {
    const std::vector<size_t> inOff = offsetsOf(inSplits, inRow);
    const std::vector<size_t> outOff = offsetsOf(outSplits, outRow);
    auto* s = static_cast<char*>(src.data_ptr());
    auto* d = static_cast<char*>(dst.data_ptr());
    checkChorus(chorusGroupStart(), comm, "chorus: chorusGroupStart");
    try {
      for (int p = 0; p < n; ++p) {
        if (inSplits[p] > 0) {
          checkChorus(chorusSend(s + inOff[p], inSplits[p] * inRow, chorusUint8, p, comm, stream), comm,
                      "chorus: chorusSend");
        }
        if (outSplits[p] > 0) {
          checkChorus(chorusRecv(d + outOff[p], outSplits[p] * outRow, chorusUint8, p, comm, stream), comm,
                      "chorus: chorusRecv");
        }
      }
    } catch (...) {
      (void)chorusGroupEnd();
      throw;
    }
    checkChorus(chorusGroupEnd(), comm, "chorus: chorusGroupEnd");
  };
  return run(std::move(plan), inputBuffer);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::alltoall(std::vector<at::Tensor>& outputTensors,
                                                            std::vector<at::Tensor>& inputTensors,
                                                            const c10d::AllToAllOptions& /*opts*/) {
  checkTensors("alltoall", inputTensors, /*sameShape=*/false);
  checkTensors("alltoall", outputTensors, /*sameShape=*/false);
  TORCH_CHECK(static_cast<int>(inputTensors.size()) == size_ && static_cast<int>(outputTensors.size()) == size_,
              "alltoall: the input and output lists must hold ", size_, " tensors (one per rank), got ",
              inputTensors.size(), " and ", outputTensors.size());
  for (int p = 0; p < size_; ++p) {
    TORCH_CHECK(inputTensors[p].scalar_type() == inputTensors[0].scalar_type() &&
                    outputTensors[p].scalar_type() == inputTensors[0].scalar_type(),
                "alltoall: tensors must all have the same type");
  }
  OpPlan plan(c10d::OpType::ALLTOALL, "chorus:all_to_all", inputTensors, {outputTensors});
  std::vector<Staged> ins;
  std::vector<Staged> outs;
  bool stagedIn = false;
  bool stagedOut = false;
  for (int p = 0; p < size_; ++p) {
    ins.push_back(stage(inputTensors[p]));
    outs.push_back(stage(outputTensors[p]));
    // A tensor that appears in both lists is read before it is written: send a copy of it.
    for (const at::Tensor& o : outputTensors) {
      if (!ins.back().copy() && ins.back().buffer.is_alias_of(o)) {
        ins.back().buffer = at::empty_like(inputTensors[p], at::MemoryFormat::Contiguous);
      }
    }
    stagedIn = stagedIn || ins.back().copy();
    stagedOut = stagedOut || outs.back().copy();
    plan.keepAlive.push_back(ins.back().buffer);
    plan.keepAlive.push_back(outs.back().buffer);
  }
  if (stagedIn) {
    plan.prologue = [ins] {
      for (const Staged& s : ins) {
        if (s.copy()) s.buffer.copy_(s.user);
      }
    };
  }
  if (stagedOut) {
    plan.epilogue = [outs] {
      for (const Staged& s : outs) {
        if (s.copy()) s.user.copy_(s.buffer);
      }
    };
  }
  plan.issue = [ins, outs](chorusComm_t comm, chorusStream_t stream) {
    checkChorus(chorusGroupStart(), comm, "chorus: chorusGroupStart");
    try {
      for (size_t p = 0; p < ins.size(); ++p) {
        const int peer = static_cast<int>(p);
        checkChorus(chorusSend(ins[p].buffer.data_ptr(), byteSize(ins[p].buffer), chorusUint8, peer, comm, stream),
                    comm, "chorus: chorusSend");
        checkChorus(chorusRecv(outs[p].buffer.data_ptr(), byteSize(outs[p].buffer), chorusUint8, peer, comm, stream),
                    comm, "chorus: chorusRecv");
      }
    } catch (...) {
      (void)chorusGroupEnd();
      throw;
    }
    checkChorus(chorusGroupEnd(), comm, "chorus: chorusGroupEnd");
  };
  return run(std::move(plan), inputTensors[0]);
}

}  // namespace chorus_torch
