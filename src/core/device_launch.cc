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
  // 0. Bad input, before anything is enqueued: a stream of another device.
  for (const Work& w : works) {
    const int sd = transport::cuda::streamDevice(w.stream);
    CHORUS_CHECK_ARG(w.stream == nullptr || sd == w.comm->device(), "stream ", w.stream, " belongs to CUDA device ", sd,
                     ", but the communicator's rank is on CUDA device ", w.comm->device());
  }
  // 1. Plans, device state and connections: every receiver's descriptor is posted before any sender waits.
  for (Work& w : works) {
    coll::planWork(w.ops, w.comm->planContext(), &w.plan);
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
  // 3. The kernels.
  for (Work& w : works) {
    CHORUS_CHECK_CUDA(cudaSetDevice(w.comm->device()));
    coll::device::launchPlan(w.plan, w.dev->env(), w.dev->internalStream(),
                             [&w](const char* what) { w.dev->trackLaunch(what); });
  }
  // 4. The caller's streams wait for them.
  for (Work& w : works) {
    CHORUS_CHECK_CUDA(cudaSetDevice(w.comm->device()));
    CHORUS_CHECK_CUDA(cudaEventRecord(w.ready, static_cast<cudaStream_t>(w.dev->internalStream())));
    CHORUS_CHECK_CUDA(cudaStreamWaitEvent(static_cast<cudaStream_t>(w.stream), w.ready, 0));
  }
}

}  // namespace chorus::core

#endif  // CHORUS_BUILD_CUDA
