#include "run/report.h"

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <stdexcept>

#include "tensor/memory_ledger.h"

namespace chorus::train {
namespace {
double mib(int64_t b) {
  return static_cast<double>(b) / (1 << 20);
}
}  // namespace

Report::Report(bool active, bool quiet) : active_(active), quiet_(quiet) {}

void Report::openCsv(const std::string& csvPath) {
  if (!active_ || csvPath.empty()) return;
  csv_ = std::fopen(csvPath.c_str(), "w");
  if (!csv_) throw std::runtime_error("cannot write --csv " + csvPath + ": " + std::strerror(errno));
  std::fprintf(csv_, "step,loss,val_loss,lr,grad_norm,tokens_per_s,step_ms,exposed_comm_ms,mfu\n");
}

void Report::takeOver(const std::string& csvPath) {
  if (active_) return;
  active_ = true;
  if (csvPath.empty()) return;
  csv_ = std::fopen(csvPath.c_str(), "a");
  if (!csv_) throw std::runtime_error("cannot append to --csv " + csvPath + ": " + std::strerror(errno));
}

Report::~Report() {
  if (csv_) std::fclose(csv_);
}

void Report::line(const char* fmt, ...) {
  if (!active_) return;
  va_list ap;
  va_start(ap, fmt);
  std::vprintf(fmt, ap);
  va_end(ap);
  std::printf("\n");
  std::fflush(stdout);
}

void Report::step(const StepRecord& r, int64_t totalSteps, bool print) {
  if (!active_) return;
  if (print && !quiet_) {
    std::printf(
        "step %5lld/%lld | loss %.4f | lr %.2e | norm %6.3f | %7.0f tok/s | %7.1f ms | comm %6.2f ms | MFU %4.1f%%",
        static_cast<long long>(r.step), static_cast<long long>(totalSteps), r.loss, r.lr, r.gradNorm, r.tokensPerSecond,
        r.stepMs, r.exposedCommMs, 100 * r.mfu);
    if (r.valLoss >= 0) std::printf(" | val %.4f", r.valLoss);
    std::printf("\n");
    std::fflush(stdout);
  }
  if (csv_) {
    std::fprintf(csv_, "%lld,%.17g,", static_cast<long long>(r.step), r.loss);
    if (r.valLoss >= 0) std::fprintf(csv_, "%.17g", r.valLoss);
    std::fprintf(csv_, ",%.6g,%.6g,%.1f,%.3f,%.3f,%.4f\n", r.lr, r.gradNorm, r.tokensPerSecond, r.stepMs,
                 r.exposedCommMs, r.mfu);
    std::fflush(csv_);
  }
}

void Report::memory(const std::vector<MemoryRow>& rows, int zero, int dp) {
  if (!active_) return;
  static const char* kFormula[] = {"16P", "8P + 8P/N", "4P + 12P/N", "16P/N"};
  std::printf("memory per rank, MiB (P = the rank's fp32 parameters, N = %d data-parallel ranks, ZeRO-%d: %s)\n", dp,
              zero, kFormula[zero]);
  std::printf("  rank         P   params    grads  optimizer   p+g+o  formula  activations  comm bufs   other\n");
  for (const MemoryRow& r : rows) {
    auto at = [&](MemKind k) { return r.bytes[static_cast<int>(k)]; };
    int64_t pgo = at(MemKind::kParams) + at(MemKind::kGrads) + at(MemKind::kOptimizer);
    std::printf("  %4d %9lld %8.2f %8.2f %10.2f %7.2f %8.2f %12.2f %10.2f %7.2f%s\n", r.rank,
                static_cast<long long>(r.psi), mib(at(MemKind::kParams)), mib(at(MemKind::kGrads)),
                mib(at(MemKind::kOptimizer)), mib(pgo), mib(r.formula), mib(at(MemKind::kActivations)),
                mib(at(MemKind::kComm)), mib(at(MemKind::kOther)),
                pgo == r.formula ? "" : "  (differs from the formula)");
  }
  std::fflush(stdout);
}

void Report::volumes(const std::vector<GroupVolume>& measured, const std::vector<ExpectedVolume>& expected, int steps) {
  if (!active_ || steps <= 0) return;
  std::printf("communication per step (rank 0; MiB of messages: the larger of input and output, as nccl-tests)\n");
  std::printf("  %-26s %-15s %9s %12s %12s  %s\n", "group", "collective", "calls", "measured", "formula", "");
  for (const GroupVolume& g : measured) {
    for (int k = 0; k < static_cast<int>(CollKind::kCount); ++k) {
      const CommStats::Row& r = g.stats->rows[k];
      const ExpectedVolume* e = nullptr;
      for (const ExpectedVolume& x : expected)
        if (x.group == g.group && static_cast<int>(x.kind) == k) e = &x;
      if (r.calls == 0 && !e) continue;
      std::printf("  %-26s %-15s %9.1f %12.3f ", g.group.c_str(), collKindName(static_cast<CollKind>(k)),
                  static_cast<double>(r.calls) / steps, mib(r.messageBytes) / steps);
      if (e) {
        std::printf("%12.3f  %s\n", e->messageBytes / (1 << 20), e->formula.c_str());
      } else {
        std::printf("%12s\n", "-");
      }
    }
  }
  std::fflush(stdout);
}

}  // namespace chorus::train
