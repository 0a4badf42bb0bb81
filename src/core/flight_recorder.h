// The flight recorder: per communicator, a ring buffer of its last CHORUS_FR_SIZE operations (sequence number,
// collective, count, type, root or peer, algorithm, channels, bytes, state, and when it was queued, started and
// ended), after PyTorch's NCCL flight recorder. A communicator dumps it to the log when an operation times out
// or fails, when it is aborted, and on request: CHORUS_FR_SIGNAL names a signal (USR1, 10, ...) on which every
// communicator of the process dumps. scripts/chorus_fr.py merges the dumps of all ranks and says which rank is
// behind, and in which operation.
//
// Recording costs a few relaxed stores per state change (no lock, no allocation, no division: the ring's size is a
// power of two) and one coarse clock read per state change of a launch, shared by its operations (the callers read
// nowUs() once and pass it). The times come from CLOCK_REALTIME_COARSE, whose resolution (a few ms) tells a hung rank
// from a running one, which is what the recorder is for; the trace (trace.h) has the precise times. Measured on an
// 8-byte send/recv pair (docs/performance.md, session 28): 2,173 instructions on 1 rank (callgrind) against 2,232
// before the shared clock read and the mask; on 2 ranks 0.49-0.55 us per pair against 0.44-0.46 with
// CHORUS_FR_SIZE=0, a difference the shared clock read and the mask did not measurably narrow.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collectives/coll_op.h"

namespace chorus::core {

enum class FrState : uint32_t { kQueued = 0, kRunning = 1, kDone = 2, kFailed = 3 };
const char* frStateName(FrState s);

// One recorded operation, as read back for a dump.
struct FrEntry {
  uint64_t seq = 0;  // 0, 1, 2, ... in the order this rank issued the communicator's operations
  coll::CollType type = coll::CollType::kAllReduce;
  reduce::DType dtype = reduce::DType::kFloat32;
  coll::Algo algo = coll::Algo::kRing;
  int root = -1;  // rooted collectives; -1 otherwise
  int peer = -1;  // send, recv; -1 otherwise
  int channels = 0;
  uint64_t count = 0;
  uint64_t bytes = 0;  // what crosses this rank's busiest link (coll::collBytes)
  FrState state = FrState::kQueued;
  int64_t queuedUs = 0, startUs = 0, endUs = 0;  // microseconds since the epoch; 0: not yet
};

class FlightRecorder {
 public:
  // `capacity` entries (0: records nothing). rank/nranks/commHash name the communicator in dumps.
  FlightRecorder(int capacity, int rank, int nranks, uint64_t commHash);
  ~FlightRecorder();
  FlightRecorder(const FlightRecorder&) = delete;
  FlightRecorder& operator=(const FlightRecorder&) = delete;

  bool enabled() const { return capacity_ > 0; }
  // The recorder's time now (microseconds since the epoch, coarse): what the calls below record. A launch reads it
  // once for all its operations.
  static int64_t nowUs();
  // Records a newly queued operation, at `now`; returns its sequence number (kept in CollOp::recordSeq).
  // `running`: it starts now, on the calling thread (a blocking call), and is recorded as started too (started()
  // need not follow).
  uint64_t queued(const coll::CollOp& op, bool running = false, int64_t now = nowUs());
  void started(uint64_t seq, int64_t now = nowUs());
  void finished(uint64_t seq, bool ok, int64_t now = nowUs());

  // The recorded operations, oldest first (at most `capacity`).
  std::vector<FrEntry> entries() const;
  // The dump as text lines: a header naming the communicator and the reason, then one line per entry.
  std::vector<std::string> dumpLines(const std::string& reason) const;
  // Writes dumpLines(reason) to the log (at WARN, whatever CHORUS_DEBUG says: a dump is asked for).
  void dump(const std::string& reason) const;

  // Every recorder of this process dumps (what CHORUS_FR_SIGNAL triggers); returns how many did.
  static int dumpAll(const std::string& reason);

 private:
  struct Slot;
  Slot* slotOf(uint64_t seq) const;

  int capacity_;       // the operations kept (CHORUS_FR_SIZE)
  uint64_t slotMask_;  // the ring's size less one: capacity_ rounded up to a power of two, so a look-up masks
  int rank_, nranks_;
  uint64_t commHash_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<uint64_t> next_{0};
};

}  // namespace chorus::core
