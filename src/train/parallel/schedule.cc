#include "parallel/schedule.h"

#include <algorithm>
#include <stdexcept>

namespace chorus::train {

ScheduleKind parseSchedule(const std::string& name) {
  if (name == "gpipe") return ScheduleKind::kGpipe;
  if (name == "1f1b") return ScheduleKind::kOneFOneB;
  if (name == "interleaved") return ScheduleKind::kInterleaved;
  throw std::invalid_argument("--schedule must be gpipe, 1f1b or interleaved, not '" + name + "'");
}

const char* scheduleName(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kGpipe: return "gpipe";
    case ScheduleKind::kOneFOneB: return "1f1b";
    case ScheduleKind::kInterleaved: return "interleaved";
  }
  return "?";
}

namespace {

// Megatron-LM's order of the k-th forward (or backward) pass over V chunks: groups of P micro-batches go
// through chunk 0, then chunk 1, ...; backward passes visit the chunks in reverse.
PipeAction interleavedAction(int k, bool forward, int stages, int chunks) {
  const int group = stages * chunks;
  int chunk = (k % group) / stages;
  if (!forward) chunk = chunks - 1 - chunk;
  return {forward, chunk, (k / group) * stages + k % stages};
}

}  // namespace

std::vector<PipeAction> pipelineSchedule(ScheduleKind kind, int P, int p, int M, int V) {
  if (P < 1 || p < 0 || p >= P || M < 1 || V < 1) throw std::invalid_argument("bad pipeline shape");
  std::vector<PipeAction> out;
  if (kind != ScheduleKind::kInterleaved && V != 1)
    throw std::invalid_argument("--virtual-stages above 1 needs --schedule interleaved");
  if (kind == ScheduleKind::kGpipe) {
    for (int m = 0; m < M; ++m) out.push_back({true, 0, m});
    for (int m = 0; m < M; ++m) out.push_back({false, 0, m});
    return out;
  }
  if (kind == ScheduleKind::kOneFOneB) {
    const int warmup = std::min(P - p - 1, M);
    for (int m = 0; m < warmup; ++m) out.push_back({true, 0, m});
    for (int i = 0; i < M - warmup; ++i) {
      out.push_back({true, 0, warmup + i});
      out.push_back({false, 0, i});
    }
    for (int i = M - warmup; i < M; ++i) out.push_back({false, 0, i});
    return out;
  }
  if (M % P != 0)
    throw std::invalid_argument("the interleaved schedule needs --micro-batches (" + std::to_string(M) +
                                ") to be a multiple of --pp (" + std::to_string(P) + ")");
  const int total = M * V;
  const int warmup = std::min((P - p - 1) * 2 + (V - 1) * P, total);
  for (int k = 0; k < warmup; ++k) out.push_back(interleavedAction(k, true, P, V));
  for (int k = 0; k < total - warmup; ++k) {
    out.push_back(interleavedAction(warmup + k, true, P, V));
    out.push_back(interleavedAction(k, false, P, V));
  }
  for (int k = total - warmup; k < total; ++k) out.push_back(interleavedAction(k, false, P, V));
  return out;
}

int peakStoredActivations(const std::vector<PipeAction>& actions) {
  int held = 0, peak = 0;
  for (const PipeAction& a : actions) {
    held += a.forward ? 1 : -1;
    peak = std::max(peak, held);
  }
  return peak;
}

double idealBubbleFraction(int stages, int micros, int chunks) {
  return static_cast<double>(stages - 1) / (static_cast<double>(chunks) * micros + stages - 1);
}

}  // namespace chorus::train
