// The CUDA executor's host side: turns a collective (or a list of point-to-point tasks) into one kernel
// launch on a cudaStream_t, with the device FIFOs a communicator built (core/device_comm.h). It mirrors the
// host executor (host/host_executor.h): same ring and tree choice per channel, same connection keys, same
// avg epilogue; only the Primitives differ (DevicePrims over DevConn instead of HostPrims over transport FIFOs).
//
// No CUDA types appear here: streams are void* (cudaStream_t), so core includes this in every build. The
// functions exist only when CHORUS_BUILD_CUDA; the core calls them only for communicators on a device.
#pragma once

#include <vector>

#include "collectives/coll_op.h"
#include "collectives/device/device_fifo.h"
#include "collectives/host/host_executor.h"
#include "collectives/topo_view.h"

namespace chorus::coll::device {

struct DevBlockReport;

// Where the executor finds a communicator's device connections (the same keys as ConnectionProvider).
class DevConnProvider {
 public:
  virtual ~DevConnProvider() = default;
  virtual DevConn devSendConn(int peer, int lane) = 0;
  virtual DevConn devRecvConn(int peer, int lane) = 0;
};

// A communicator as the device executor needs it.
struct DevExecEnv {
  int rank = 0;
  int nranks = 1;
  const TopoView* topo = nullptr;
  DevConnProvider* conns = nullptr;
  const int* const* deviceRings = nullptr;       // per channel: the ring order in device memory
  const volatile uint32_t* abortFlag = nullptr;  // device view of the mapped abort word
  DevBlockReport* reports = nullptr;             // device view of the mapped per-block reports
};

// Launches one ring/tree collective on `stream`. Throws chorus::Error when the launch fails.
void launchCollective(const CollOp& op, const DevExecEnv& env, void* stream);
// Launches every task in one kernel (one block per (peer, direction) queue), after copying the transfers to
// oneself with cudaMemcpyAsync. Throws chorus::Error (chorusInvalidUsage for mismatched self transfers,
// chorusInvalidArgument past kDevMaxP2pQueues queues or kDevMaxP2pTasks tasks).
void launchP2p(const std::vector<P2pTask>& tasks, const DevExecEnv& env, void* stream);

// The DevAlgoKind a collective runs with (tests: every (type, algo) the host executor runs has a kernel body).
int algoKind(const CollOp& op);

}  // namespace chorus::coll::device
