// Scheduling policies of Chorus's own threads. A host stream's thread runs as SCHED_BATCH: woken by an enqueue, a
// batch thread does not preempt the caller that woke it, which would otherwise wait for its core to enqueue the rest of
// a loop (docs/performance.md, session 24). Linux gives a new thread its creator's policy, so a thread that must
// preempt when it wakes (the network proxy, a communicator's worker) drops a SCHED_BATCH inherited from a stream's
// thread that happened to create it.
#pragma once

namespace chorus {

// Makes the calling thread SCHED_BATCH; false (the policy unchanged) where the system refuses.
bool runAsBatch();

// Makes the calling thread SCHED_OTHER if it is SCHED_BATCH; any other policy (a real-time one the application set)
// is kept.
void leaveInheritedBatch();

}  // namespace chorus
