#include "core/device_launch.h"

#include "chorus_build_config.h"

#if CHORUS_BUILD_CUDA

#include <cuda_runtime.h>

#include "base/error.h"
#include "collectives/device/device_executor.h"
#include "core/comm.h"
#include "core/device_comm.h"
#include "transport/cuda/cuda_util.h"

namespace chorus::core {

namespace {

struct Work {
  Comm* comm = nullptr;
  void* stream = nullptr;
  std::vector<coll::CollOp> ops;
  DeviceComm* dev = nullptr;
  coll::Plan plan;
  cudaEvent_t ready = nullptr;
};

// The works' events, released however the launch ends (the runtime keeps them until their waits are done), and
// the caller's device restored.
struct LaunchScope {
  std::vector<Work>& works;
  int prevDevice = 0;
  explicit LaunchScope(std::vector<Work>& w) : works(w) { cudaGetDevice(&prevDevice); }
  ~LaunchScope() {
    for (Work& w : works) {
      if (w.ready != nullptr) cudaEventDestroy(w.ready);
    }
    cudaSetDevice(prevDevice);
  }
};

// Makes the caller's stream of `w` wait for what its internal stream holds now; the first failing call's error.
cudaError_t callerWaits(Work& w) {
  cudaError_t e = cudaSetDevice(w.comm->device());
  if (e == cudaSuccess) e = cudaEventRecord(w.ready, static_cast<cudaStream_t>(w.dev->internalStream()));
  if (e == cudaSuccess) e = cudaStreamWaitEvent(static_cast<cudaStream_t>(w.stream), w.ready, 0);
  return e;
}

// When a launch throws part-way, the callers' streams of the works whose kernels may have been enqueued (the
// first `started`) still wait for the internal streams, best effort: the error already travelling is the one
// reported.
struct CallersWait {
  std::vector<Work>& works;
  size_t started = 0;
  bool done = false;
  explicit CallersWait(std::vector<Work>& w) : works(w) {}
  ~CallersWait() {
    if (done) return;
    for (size_t i = 0; i < started; ++i) {
      if (works[i].ready != nullptr) callerWaits(works[i]);
    }
  }
};

DeviceComm& deviceState(Comm& comm) {
  // Creation races only between threads that drive the same communicator, which the API forbids.
  if (!comm.deviceState) comm.deviceState.reset(new DeviceComm(comm));
  return *comm.deviceState;
}

}  // namespace

void launchDeviceCalls(const std::vector<DeviceCall>& calls) {
  std::vector<Work> works;
  for (const DeviceCall& c : calls) {
    Work* w = nullptr;
    for (Work& x : works) {
      if (x.comm == c.comm && x.stream == c.stream) w = &x;
    }
    if (w == nullptr) {
      w = &works.emplace_back();
      w->comm = c.comm;
      w->stream = c.stream;
    }
    w->ops.push_back(c.op);
  }
  LaunchScope scope(works);
  // 0. Bad input, before anything is enqueued: a stream of another device, or one being captured into a CUDA
  // graph (the launch records events and waits across streams, and the watchdog queries them: none of that
  // may enter a capture).
  for (const Work& w : works) {
    const int sd = transport::cuda::streamDevice(w.stream);
    CHORUS_CHECK_ARG(w.stream == nullptr || sd == w.comm->device(), "stream ", w.stream, " belongs to CUDA device ", sd,
                     ", but the communicator's rank is on CUDA device ", w.comm->device());
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    CHORUS_CHECK_CUDA(cudaStreamIsCapturing(static_cast<cudaStream_t>(w.stream), &capture), "cudaStreamIsCapturing");
    CHORUS_CHECK_USAGE(capture == cudaStreamCaptureStatusNone, "stream ", w.stream,
                       " is being captured into a CUDA graph: Chorus does not record collectives in CUDA graphs yet "
                       "(docs/cuda.md); launch them outside the capture");
  }
  // 1. Plans, device state and connections: every receiver's descriptor is posted before any sender waits.
  for (Work& w : works) {
    coll::PlanContext ctx = w.comm->planContext();
    ctx.ordersOverlaps = false;  // each point-to-point queue is its own CUDA block: nothing orders two of them
    coll::planWork(w.ops, ctx, &w.plan);
    w.dev = &deviceState(*w.comm);
  }
  for (Work& w : works) w.comm->connections().postReceivers(w.plan.connections, transport::FifoMemory::kDevice);
  for (Work& w : works) w.comm->connections().connectSenders(w.plan.connections, transport::FifoMemory::kDevice);
  // 2. Every internal stream waits for its caller's stream (all before any kernel: see the header).
  for (Work& w : works) {
    CHORUS_CHECK_CUDA(cudaSetDevice(w.comm->device()));
    CHORUS_CHECK_CUDA(cudaEventCreateWithFlags(&w.ready, cudaEventDisableTiming));
    CHORUS_CHECK_CUDA(cudaEventRecord(w.ready, static_cast<cudaStream_t>(w.stream)), "cudaEventRecord on the stream");
    CHORUS_CHECK_CUDA(cudaStreamWaitEvent(static_cast<cudaStream_t>(w.dev->internalStream()), w.ready, 0));
  }
  // 3. The kernels. From the first one on, the callers' streams must wait for what was launched even when a
  // later launch throws: those kernels use the callers' buffers.
  CallersWait callersWait(works);
  for (Work& w : works) {
    CHORUS_CHECK_CUDA(cudaSetDevice(w.comm->device()));
    ++callersWait.started;
    w.dev->markStart();
    coll::device::launchPlan(w.plan, w.dev->env(), w.dev->internalStream(),
                             [&w](const char* what) { w.dev->trackLaunch(what); });
  }
  // 4. The caller's streams wait for them.
  for (Work& w : works) CHORUS_CHECK_CUDA(callerWaits(w), "making the caller's stream wait for the kernels");
  callersWait.done = true;
}

}  // namespace chorus::core

#endif  // CHORUS_BUILD_CUDA
