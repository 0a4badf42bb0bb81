#include "tensor/memory_ledger.h"

#include <algorithm>

namespace chorus::train {
namespace {
thread_local MemoryLedger* tCurrent = nullptr;
}

const char* memKindName(MemKind kind) {
  switch (kind) {
    case MemKind::kParams: return "parameters";
    case MemKind::kGrads: return "gradients";
    case MemKind::kOptimizer: return "optimizer";
    case MemKind::kActivations: return "activations";
    case MemKind::kComm: return "comm buffers";
    case MemKind::kOther: return "other";
    case MemKind::kCount: break;
  }
  return "?";
}

void MemoryLedger::charge(MemKind kind, int64_t bytes) {
  auto k = static_cast<int>(kind);
  current_[k] += bytes;
  peak_[k] = std::max(peak_[k], current_[k]);
}

void MemoryLedger::refund(MemKind kind, int64_t bytes) {
  current_[static_cast<int>(kind)] -= bytes;
}

void MemoryLedger::resetPeaks() {
  peak_ = current_;
}

MemoryLedger& MemoryLedger::current() {
  static MemoryLedger processDefault;
  return tCurrent ? *tCurrent : processDefault;
}

MemoryLedger::Scope::Scope(MemoryLedger* ledger) : previous_(tCurrent) {
  tCurrent = ledger;
}
MemoryLedger::Scope::~Scope() {
  tCurrent = previous_;
}

}  // namespace chorus::train
