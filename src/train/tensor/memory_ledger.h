// Counts the bytes a rank holds in each kind of buffer, so the trainer can print its memory beside ZeRO's
// formulas. Every Buffer charges the ledger of the thread that made it (one ledger per rank; ranks may be
// threads of one process), and refunds the same ledger when it is freed.
#ifndef CHORUS_TRAIN_TENSOR_MEMORY_LEDGER_H_
#define CHORUS_TRAIN_TENSOR_MEMORY_LEDGER_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace chorus::train {

// What a buffer holds; the categories of ZeRO's memory analysis plus the trainer's own.
enum class MemKind { kParams, kGrads, kOptimizer, kActivations, kComm, kOther, kCount };

const char* memKindName(MemKind kind);

class MemoryLedger {
 public:
  void charge(MemKind kind, int64_t bytes);
  void refund(MemKind kind, int64_t bytes);
  int64_t current(MemKind kind) const { return current_[static_cast<int>(kind)]; }
  int64_t peak(MemKind kind) const { return peak_[static_cast<int>(kind)]; }
  // Forgets the peaks (keeps what is held now), e.g. after start-up allocations that training does not need.
  void resetPeaks();

  // The ledger buffers made on this thread charge; a process-wide default when none was installed.
  static MemoryLedger& current();
  // Installs `ledger` as this thread's for the lifetime of the Scope.
  class Scope {
   public:
    explicit Scope(MemoryLedger* ledger);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    MemoryLedger* previous_;
  };

 private:
  std::array<int64_t, static_cast<int>(MemKind::kCount)> current_{};
  std::array<int64_t, static_cast<int>(MemKind::kCount)> peak_{};
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_TENSOR_MEMORY_LEDGER_H_
