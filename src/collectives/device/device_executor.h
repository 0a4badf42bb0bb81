// The CUDA executor's host side: turns one communicator's plan (plan/plan.h) into kernel launches on a
// cudaStream_t: one kernel per collective (one CUDA block per channel) and one for all its point-to-point queues
// (one block per queue), with the plan's staging copies and copies to oneself as stream-ordered memory
// operations. It reads the same plan as the host executor (host/host_executor.h): same peers per channel, same
// chunk geometry, same avg epilogue; only the Primitives differ (DevicePrims over device FIFOs).
//
// No CUDA types appear here: streams are void* (cudaStream_t), so core includes this in every build. The
// functions exist only when CHORUS_BUILD_CUDA; the core calls them only for communicators on a device.
#pragma once

#include <functional>

#include "collectives/plan/plan.h"
#include "collectives/topo_view.h"
#include "transport/cuda/device_fifo.h"

namespace chorus::coll::device {

struct DevBlockReport;

// Where the executor finds a communicator's device connections (the keys of ConnectionProvider, conn_key.h).
class DevConnProvider {
 public:
  virtual ~DevConnProvider() = default;
  virtual transport::cuda::DevConn devSendConn(int peer, int lane) = 0;
  virtual transport::cuda::DevConn devRecvConn(int peer, int lane) = 0;
};

// A communicator as the device executor needs it.
struct DevExecEnv {
  int rank = 0;
  int nranks = 1;
  const TopoView* topo = nullptr;
  DevConnProvider* conns = nullptr;              // every connection of the plan is built
  const int* const* deviceRings = nullptr;       // per channel: the ring order in device memory
  const volatile uint32_t* abortFlag = nullptr;  // device view of the mapped abort word
  DevBlockReport* reports = nullptr;             // device view of the mapped per-block reports
};

// Enqueues the plan on `stream`; launched(what) runs after each kernel is enqueued (the watchdog tracks it).
// Staging copies are cudaMallocAsync'd on the stream and freed after the last kernel. Throws chorus::Error
// (chorusUnhandledCudaError when the runtime refuses, chorusInvalidArgument past kDevMaxP2pQueues queues or
// kDevMaxP2pTasks tasks); what was enqueued before stays enqueued.
void launchPlan(const Plan& plan, const DevExecEnv& env, void* stream,
                const std::function<void(const char*)>& launched);

// Loads every kernel of this executor into `device`'s context, once per device and process (later calls return at
// once). Why: under CUDA's lazy loading, the default since CUDA 12.2, a kernel is loaded at its first launch, and
// loading may wait for the kernels already running on the device. When ranks share a GPU as threads of one process,
// one rank's collective kernel waits for a peer's; if the peer's thread is the one loading a kernel at that moment,
// neither ever ends (the CUDA programming guide's "concurrent execution" caveat of lazy loading; NCCL loads its
// kernels at initialization for the same reason). Called before a communicator's first launch on the device, when
// none of its kernels can be waiting. A kernel that cannot be loaded is left to fail at its launch, with its error.
void loadKernels(int device);

// The DevAlgoKind a collective runs with, or -1 when no kernel body implements it (tests: every algorithm the
// tuner can choose has one).
int algoKind(const CollOp& op);

}  // namespace chorus::coll::device
