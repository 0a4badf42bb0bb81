// The trace: with CHORUS_TRACE_FILE set, each process writes a Chrome/Perfetto JSON trace (the trace-event
// format, "JSON array" form): one complete event per operation (pid = rank, with its bytes, algorithm,
// channels and sequence number) and, nested in it, one per transport wait longer than a microsecond (at most
// kMaxWaitsPerOp per operation). The file name may hold %r (the rank of the first communicator that traces),
// %p (pid) and %h (host); without %r or %p, ".rank<R>" goes before its extension. scripts/chorus_trace.py
// merges the ranks' files into one, and perf/trace_timeline.sh draws a timeline PNG from it (gnuplot).
//
// Tracing off costs one branch per operation (Comm::tracing()), nothing per wait that a thread-local load
// does not already cost.
#pragma once

#include <cstdint>
#include <string>

#include "base/wait_observer.h"
#include "collectives/coll_op.h"

namespace chorus::core {

// True when CHORUS_TRACE_FILE is set (read when a communicator is created).
bool traceRequested();

// Records one rank's operations on the calling thread while it lives: the waits of the thread become nested
// events, and finish() writes the operation's event.
class OpTrace : public WaitObserver {
 public:
  static constexpr int kMaxWaitsPerOp = 64;

  OpTrace(int rank, uint64_t commHash);
  ~OpTrace() override;
  OpTrace(const OpTrace&) = delete;
  OpTrace& operator=(const OpTrace&) = delete;

  // Writes the operation event of `op` (the first of a group names it; `nops` counts the group).
  void finish(const coll::CollOp& op, size_t nops, int nranks, bool ok);

  void waited(const char* what, const std::string& where, uint64_t startNs, uint64_t endNs) override;

 private:
  int rank_;
  uint64_t commHash_;
  uint64_t startNs_;
  int waits_ = 0;
  std::string events_;  // the nested wait events, written with the operation's
  WaitObserver* saved_;
};

// Writes what is buffered to the file (communicator destruction calls it; exit does too).
void flushTrace();

}  // namespace chorus::core
