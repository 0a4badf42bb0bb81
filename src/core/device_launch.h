// Launching the calls of CUDA communicators: group.cc hands every call of a communicator whose device is >= 0
// here instead of to the host executor. Calls return once their kernels are enqueued.
#pragma once

#include <vector>

#include "collectives/coll_op.h"

namespace chorus::core {

class Comm;

struct DeviceCall {
  Comm* comm = nullptr;
  void* stream = nullptr;  // the caller's cudaStream_t (NULL: the legacy default stream)
  coll::CollOp op;
};

// Enqueues the calls, one work per (communicator, stream), planned once (collectives/plan/plan.h): its
// collectives in issue order and its point-to-point operations fused in one kernel, so that a group's sends and
// receives never deadlock. For every work: the communicator's internal stream waits for the caller's stream, the
// kernels run on it, and the caller's stream waits for them; the waits of all works are enqueued before any
// kernel and the dependencies back after all of them, so ranks sharing a device and a stream (the NULL stream,
// say) in one group run together. Throws chorus::Error at the first failure; the watchdog reports what happens
// later.
void launchDeviceCalls(const std::vector<DeviceCall>& calls);

}  // namespace chorus::core
