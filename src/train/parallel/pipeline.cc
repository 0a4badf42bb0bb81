#include "parallel/pipeline.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace chorus::train {
namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
}  // namespace

Pipeline::Pipeline(const ParamLayout& layout, Grid& grid, ScheduleKind schedule, int batch,
                   TensorParallelOps<float>* tp, bool sequenceParallel, UnitAccess<float>& access)
    : layout_(layout),
      grid_(grid),
      kind_(schedule),
      batch_(batch),
      sp_(sequenceParallel),
      access_(access),
      device_(Device::current()) {
  const int chunks = static_cast<int>(layout.part().chunks.size());
  for (int c = 0; c < chunks; ++c) {
    stages_.push_back(std::make_unique<GptStage<float>>(layout, c, batch, tp, sequenceParallel));
    dout_.emplace_back(stages_.back()->endsModel() ? 0 : stages_.back()->boundaryElems(), MemKind::kActivations);
  }
  slots_.resize(chunks);
}

int64_t Pipeline::activationBytesPerMicro() const {
  int64_t n = 0;
  for (int c = 0; c < chunks(); ++c) n += StageActivations<float>(layout_, c, batch_, sp_).bytes();
  return n;
}

Pipeline::Slot& Pipeline::acquire(int chunk, int micro) {
  for (auto& s : slots_[chunk]) {
    if (s->micro >= 0) continue;
    // Its activations may still be on their way to the neighbours.
    s->sendOut.wait();
    s->sendGrad.wait();
    s->micro = micro;
    return *s;
  }
  auto s = std::make_unique<Slot>();
  s->acts = std::make_unique<StageActivations<float>>(layout_, chunk, batch_, sp_);
  s->micro = micro;
  slots_[chunk].push_back(std::move(s));
  return *slots_[chunk].back();
}

Pipeline::Slot& Pipeline::find(int chunk, int micro) {
  for (auto& s : slots_[chunk])
    if (s->micro == micro) return *s;
  throw std::logic_error("pipeline: backward pass of a micro-batch whose forward pass did not run");
}

// Virtual stage s = chunk * P + p reads from s-1 and writes to s+1: the neighbouring stage's same chunk, or
// across the wrap between the last and the first stage for the next chunk.
Comm* Pipeline::inbound(int chunk, bool gradients) {
  const int p = grid_.stage(), P = grid_.ppSize();
  if (!gradients) return p > 0 ? grid_.activationsFrom(false) : (chunk > 0 ? grid_.activationsFrom(true) : nullptr);
  return p < P - 1 ? grid_.gradientsFrom(false) : (chunk + 1 < chunks() ? grid_.gradientsFrom(true) : nullptr);
}

Comm* Pipeline::outbound(int chunk, bool gradients) {
  const int p = grid_.stage(), P = grid_.ppSize();
  if (!gradients)
    return p < P - 1 ? grid_.activationsTo(false) : (chunk + 1 < chunks() ? grid_.activationsTo(true) : nullptr);
  return p > 0 ? grid_.gradientsTo(false) : (chunk > 0 ? grid_.gradientsTo(true) : nullptr);
}

void Pipeline::forward(int chunk, int micro, const Fill& fill, PipelineStats& st) {
  GptStage<float>& stage = *stages_[chunk];
  Slot& s = acquire(chunk, micro);
  st.peakActivations = std::max(st.peakActivations, ++held_);
  StageActivations<float>& a = *s.acts;
  if (stage.startsModel() || stage.endsModel()) {
    const int64_t n = a.tokens.size();
    hostTokens_.resize(static_cast<size_t>(n));
    hostTargets_.resize(hostTokens_.size());
    fill(micro, hostTokens_.data(), hostTargets_.data());
    device_.fromHost(a.tokens.data(), hostTokens_.data(), n * sizeof(int32_t));
    device_.fromHost(a.targets.data(), hostTargets_.data(), n * sizeof(int32_t));
  }
  const size_t n = static_cast<size_t>(stage.boundaryElems());
  if (!stage.startsModel()) {
    Comm* in = inbound(chunk, false);
    in->sendRecv({{false, a.x[0].data(), n, DType::kFloat32, 1 - in->rank()}}).wait();
  }
  auto t0 = Clock::now();
  stage.forward(a, access_);
  st.computeSeconds += since(t0);
  if (stage.endsModel()) {
    st.lossSum += a.loss;
  } else {
    Comm* out = outbound(chunk, false);
    s.sendOut = out->sendRecv({{true, a.x.back().data(), n, DType::kFloat32, 1 - out->rank()}});
  }
}

void Pipeline::backward(int chunk, int micro, float gradScale, PipelineStats& st) {
  GptStage<float>& stage = *stages_[chunk];
  Slot& s = find(chunk, micro);
  StageActivations<float>& a = *s.acts;
  const size_t n = static_cast<size_t>(stage.boundaryElems());
  if (!stage.endsModel()) {
    Comm* in = inbound(chunk, true);
    in->sendRecv({{false, dout_[chunk].data(), n, DType::kFloat32, 1 - in->rank()}}).wait();
  }
  auto t0 = Clock::now();
  stage.backward(a, gradScale, stage.endsModel() ? nullptr : dout_[chunk].data(), access_);
  st.computeSeconds += since(t0);
  if (!stage.startsModel()) {
    // The input activation is no longer needed: its buffer carries the input gradient back.
    device_.copy(a.x[0].data(), stage.inputGrad(), n * sizeof(float));
    Comm* out = outbound(chunk, true);
    s.sendGrad = out->sendRecv({{true, a.x[0].data(), n, DType::kFloat32, 1 - out->rank()}});
  }
  s.micro = -1;
  --held_;
}

void Pipeline::drain() {
  for (auto& chunk : slots_)
    for (auto& s : chunk) {
      s->sendOut.wait();
      s->sendGrad.wait();
    }
}

PipelineStats Pipeline::train(int micros, float gradScale, const Fill& fill) {
  schedule_ = pipelineSchedule(kind_, grid_.ppSize(), grid_.stage(), micros, chunks());
  PipelineStats st;
  auto t0 = Clock::now();
  for (const PipeAction& a : schedule_) {
    if (a.forward) {
      forward(a.chunk, a.micro, fill, st);
    } else {
      backward(a.chunk, a.micro, gradScale, st);
    }
  }
  drain();
  st.elapsedSeconds = since(t0);
  return st;
}

double Pipeline::evaluate(int micros, const Fill& fill) {
  PipelineStats st;
  for (int m = 0; m < micros; ++m)
    for (int c = 0; c < chunks(); ++c) {
      forward(c, m, fill, st);
      find(c, m).micro = -1;
      --held_;
    }
  drain();
  return st.lossSum;
}

}  // namespace chorus::train
