#include "core/device_launch.h"

#include "chorus_build_config.h"

#if CHORUS_BUILD_CUDA

#include <cuda_runtime.h>

#include "base/error.h"
#include "collectives/device/device_executor.h"
#include "collectives/host/host_executor.h"
#include "core/comm.h"
#include "core/device_comm.h"
#include "transport/cuda/cuda_util.h"

namespace chorus::core {

namespace {

struct Work {
  Comm* comm;
  void* stream;
  std::vector<coll::CollOp> ops;
  DeviceComm* dev = nullptr;
  cudaEvent_t ready = nullptr;
};

void cudaOrThrow(cudaError_t e, const char* what) {
  if (e != cudaSuccess) CHORUS_THROW(Status::kUnhandledCudaError, what, ": ", cudaGetErrorString(e));
}

DeviceComm& deviceState(Comm& comm) {
  // Creation races only between threads that drive the same communicator, which the API forbids.
  if (!comm.deviceState) comm.deviceState.reset(new DeviceComm(comm));
  return *comm.deviceState;
}

std::vector<coll::ConnKey> neededKeys(const Work& w) {
  std::vector<coll::ConnKey> keys;
  for (const coll::CollOp& op : w.ops) {
    coll::addNeededConnections(op, w.comm->topo(), w.comm->rank(), w.comm->nranks(), &keys);
  }
  return keys;
}

// Enqueues one work's kernels on its communicator's internal stream.
void enqueueWork(Work& w) {
  Comm& comm = *w.comm;
  cudaOrThrow(cudaSetDevice(comm.device()), "cudaSetDevice");
  coll::device::DevExecEnv env = w.dev->env();
  void* s = w.dev->internalStream();
  std::vector<coll::P2pTask> tasks;
  void* scratch = nullptr;
  for (const coll::CollOp& op : w.ops) {
    if (!coll::isP2pOp(op)) {
      coll::device::launchCollective(op, env, s);
      w.dev->trackLaunch(coll::collName(op.type));
      continue;
    }
    coll::CollOp p = op;
    if (op.type == coll::CollType::kAllToAll && op.sendbuff == op.recvbuff && op.count > 0) {
      // In place: what this rank sends must be read before it is overwritten by what it receives.
      const size_t bytes = op.count * reduce::dtypeSize(op.dtype) * comm.nranks();
      cudaOrThrow(cudaMallocAsync(&scratch, bytes, static_cast<cudaStream_t>(s)), "cudaMallocAsync");
      cudaOrThrow(cudaMemcpyAsync(scratch, op.sendbuff, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(s)),
                  "cudaMemcpyAsync");
      p.sendbuff = scratch;
    }
    coll::addP2pTasks(p, comm.rank(), comm.nranks(), &tasks);
  }
  if (!tasks.empty()) {
    coll::device::launchP2p(tasks, env, s);
    w.dev->trackLaunch("point-to-point group");
  }
  if (scratch != nullptr) cudaFreeAsync(scratch, static_cast<cudaStream_t>(s));
}

}  // namespace

Status launchDeviceCalls(const std::vector<DeviceCall>& calls, std::string* error) {
  std::vector<Work> works;
  for (const DeviceCall& c : calls) {
    Work* w = nullptr;
    for (Work& x : works) {
      if (x.comm == c.comm && x.stream == c.stream) w = &x;
    }
    if (w == nullptr) {
      works.push_back(Work{c.comm, c.stream, {}});
      w = &works.back();
    }
    w->ops.push_back(c.op);
  }
  int prevDevice = 0;
  cudaGetDevice(&prevDevice);
  try {
    // 0. Bad input, before anything is enqueued: a stream of another device.
    for (const Work& w : works) {
      const int sd = transport::cuda::streamDevice(w.stream);
      CHORUS_CHECK_ARG(w.stream == nullptr || sd == w.comm->device(), "stream ", w.stream, " belongs to CUDA device ",
                       sd, ", but the communicator's rank is on CUDA device ", w.comm->device());
    }
    // 1. Device state and connections: every receiver's descriptor is posted before any sender waits.
    for (Work& w : works) w.dev = &deviceState(*w.comm);
    std::vector<std::vector<coll::ConnKey>> keys;
    for (Work& w : works) keys.push_back(neededKeys(w));
    for (size_t i = 0; i < works.size(); ++i) works[i].dev->postReceivers(keys[i]);
    for (size_t i = 0; i < works.size(); ++i) works[i].dev->connectSenders(keys[i]);
    // 2. Every internal stream waits for its caller's stream (all before any kernel: see the header).
    for (Work& w : works) {
      cudaOrThrow(cudaSetDevice(w.comm->device()), "cudaSetDevice");
      cudaOrThrow(cudaEventCreateWithFlags(&w.ready, cudaEventDisableTiming), "cudaEventCreateWithFlags");
      cudaOrThrow(cudaEventRecord(w.ready, static_cast<cudaStream_t>(w.stream)), "cudaEventRecord on the stream");
      cudaOrThrow(cudaStreamWaitEvent(static_cast<cudaStream_t>(w.dev->internalStream()), w.ready, 0),
                  "cudaStreamWaitEvent");
    }
    // 3. The kernels.
    for (Work& w : works) enqueueWork(w);
    // 4. The caller's streams wait for them.
    for (Work& w : works) {
      cudaOrThrow(cudaSetDevice(w.comm->device()), "cudaSetDevice");
      cudaOrThrow(cudaEventRecord(w.ready, static_cast<cudaStream_t>(w.dev->internalStream())), "cudaEventRecord");
      cudaOrThrow(cudaStreamWaitEvent(static_cast<cudaStream_t>(w.stream), w.ready, 0), "cudaStreamWaitEvent");
    }
  } catch (const Error& e) {
    for (Work& w : works) {
      if (w.ready != nullptr) cudaEventDestroy(w.ready);
    }
    cudaSetDevice(prevDevice);
    if (error != nullptr) *error = e.what();
    return e.status();
  }
  for (Work& w : works) cudaEventDestroy(w.ready);  // released by the runtime once its waits are done
  cudaSetDevice(prevDevice);
  return Status::kSuccess;
}

}  // namespace chorus::core

#endif  // CHORUS_BUILD_CUDA
