#include "core/device_comm.h"

#if CHORUS_BUILD_CUDA

#include <cuda_runtime.h>

#include <chrono>

#include "base/error.h"
#include "base/logging.h"
#include "base/wait.h"
#include "collectives/device/device_executor.h"
#include "collectives/device/device_launch_args.h"
#include "core/comm.h"
#include "transport/cuda/cuda_util.h"

namespace chorus::core {

namespace cu = transport::cuda;
using coll::device::DevBlockReport;

namespace {

constexpr int kReportSlots = coll::device::kDevMaxP2pQueues;  // >= kMaxChannels blocks of a collective launch
constexpr auto kWatchdogPeriod = std::chrono::milliseconds(5);

}  // namespace

void DeviceCommDeleter::operator()(DeviceComm* d) const {
  delete d;
}

DeviceComm::DeviceComm(Comm& comm) : comm_(comm), device_(comm.device()) {
  cu::DeviceScope scope(device_);
  // Before this communicator's first kernel: no kernel of it can be waiting while the device loads (lazy loading).
  coll::device::loadKernels(device_);
  // One mapped block: the abort word on its own line, then the reports.
  const size_t bytes = 128 + kReportSlots * sizeof(DevBlockReport);
  void* dev = nullptr;
  mapped_ = cu::mappedHostAlloc(bytes, &dev);
  abortHost_ = static_cast<volatile uint32_t*>(mapped_);
  abortDev_ = dev;
  reportsHost_ = reinterpret_cast<DevBlockReport*>(static_cast<char*>(mapped_) + 128);
  reportsDev_ = reinterpret_cast<DevBlockReport*>(static_cast<char*>(dev) + 128);
  const auto& rings = comm_.topo().rings;
  for (const auto& ring : rings) {
    auto* d = static_cast<int*>(cu::deviceAlloc(ring.size() * sizeof(int)));
    deviceRings_.push_back(d);
    cu::copyToDevice(d, ring.data(), ring.size() * sizeof(int));
  }
  cudaStream_t s = nullptr;
  CHORUS_CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  stream_ = s;
  watchdog_ = std::thread([this] { watchdogLoop(); });
}

DeviceComm::~DeviceComm() {
  // Let in-flight kernels finish; past the communicator's timeout (or at once after an abort) raise the
  // abort word so that waiting kernels end, then wait for them: nothing below may be freed under a kernel.
  {
    Deadline deadline = Deadline::afterMs(comm_.options().timeoutMs);
    for (;;) {
      std::unique_lock<std::mutex> lock(flightMu_);
      bool busy = false;
      for (const InFlight& f : inFlight_)
        busy |= cudaEventQuery(static_cast<cudaEvent_t>(f.event)) == cudaErrorNotReady;
      if (!busy) break;
      if (comm_.aborted() || deadline.expired()) *abortHost_ = 1;
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  {
    std::lock_guard<std::mutex> lock(stopMu_);
    stop_ = true;
  }
  stopCv_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
  cu::DeviceScope scope(device_);
  for (InFlight& f : inFlight_) {
    cudaEventDestroy(static_cast<cudaEvent_t>(f.event));
    if (f.start != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(f.start));
  }
  if (pendingStart_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(pendingStart_));
  for (int* r : deviceRings_) cu::deviceFree(r);
  if (stream_ != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
  cu::mappedHostFree(mapped_);
}

coll::device::DevExecEnv DeviceComm::env() {
  coll::device::DevExecEnv e;
  e.rank = comm_.rank();
  e.nranks = comm_.nranks();
  e.topo = &comm_.topo();
  e.conns = &comm_.connections();
  e.deviceRings = deviceRings_.data();
  e.abortFlag = static_cast<const volatile uint32_t*>(abortDev_);
  e.reports = reportsDev_;
  return e;
}

namespace {

// An event recorded now on `stream`; the caller owns it.
cudaEvent_t recordEvent(void* stream) {
  cudaEvent_t ev = nullptr;
  CHORUS_CHECK_CUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  const cudaError_t e = cudaEventRecord(ev, static_cast<cudaStream_t>(stream));
  if (e != cudaSuccess) {
    cudaEventDestroy(ev);
    CHORUS_CHECK_CUDA(e, "cudaEventRecord");
  }
  return ev;
}

}  // namespace

void DeviceComm::markStart() {
  cudaEvent_t ev = recordEvent(stream_);
  std::lock_guard<std::mutex> lock(flightMu_);
  if (pendingStart_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(pendingStart_));
  pendingStart_ = ev;
}

void DeviceComm::trackLaunch(std::string what) {
  cudaEvent_t ev = recordEvent(stream_);
  std::lock_guard<std::mutex> lock(flightMu_);
  // Only the first launch after markStart waits for the caller's stream; later ones start when their
  // predecessor on the internal stream ends, which the watchdog sees as that predecessor leaving inFlight_.
  inFlight_.push_back(InFlight{ev, pendingStart_, std::move(what)});
  pendingStart_ = nullptr;
}

void DeviceComm::checkReports(const std::string& what) {
  for (int i = 0; i < kReportSlots; ++i) {
    const uint32_t s = *reinterpret_cast<volatile uint32_t*>(&reportsHost_[i].status);
    if (s == coll::device::kDevOk) continue;
    Status st = Status::kRemoteError;
    const char* why = "a peer's FIFO was closed (the peer died or destroyed its communicator)";
    if (s == coll::device::kDevAborted) {
      st = comm_.aborted() ? Status::kRemoteError : Status::kTimeout;
      why = comm_.aborted() ? "aborted (chorusCommAbort)" : "no progress for CHORUS_TIMEOUT_MS: a peer never came";
    } else if (s == coll::device::kDevSizeMismatch) {
      st = Status::kInvalidUsage;
      why = "received a slot of another size than expected: ranks called different collectives or counts";
    }
    comm_.recordAsyncError(
        st, "rank " + std::to_string(comm_.rank()) + ": " + what + ": block " + std::to_string(i) + ": " + why);
    // Recorded once: the slot is free for the next launch (whose blocks set it only while it reads kDevOk).
    *reinterpret_cast<volatile uint32_t*>(&reportsHost_[i].status) = coll::device::kDevOk;
    return;
  }
}

void DeviceComm::watchdogLoop() {
  cudaSetDevice(device_);
  std::vector<uint64_t> lastProgress(kReportSlots, 0);
  uint64_t lastMoveNs = nowNs();
  const uint64_t timeoutNs = static_cast<uint64_t>(comm_.options().timeoutMs) * 1000000ull;
  std::unique_lock<std::mutex> stopLock(stopMu_);
  while (!stop_) {
    stopCv_.wait_for(stopLock, kWatchdogPeriod);
    if (comm_.aborted()) *abortHost_ = 1;
    std::lock_guard<std::mutex> lock(flightMu_);
    while (!inFlight_.empty()) {
      cudaError_t q = cudaEventQuery(static_cast<cudaEvent_t>(inFlight_.front().event));
      if (q == cudaErrorNotReady) break;
      if (q != cudaSuccess) {
        comm_.recordAsyncError(Status::kUnhandledCudaError, "rank " + std::to_string(comm_.rank()) + ": " +
                                                                inFlight_.front().what + ": " + cudaGetErrorString(q));
      }
      checkReports(inFlight_.front().what);
      cudaEventDestroy(static_cast<cudaEvent_t>(inFlight_.front().event));
      if (inFlight_.front().start != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(inFlight_.front().start));
      inFlight_.pop_front();
    }
    // A launch still queued behind its caller's stream has not started: its clock has not started either.
    const bool started =
        !inFlight_.empty() && (inFlight_.front().start == nullptr ||
                               cudaEventQuery(static_cast<cudaEvent_t>(inFlight_.front().start)) != cudaErrorNotReady);
    bool moved = false;
    for (int i = 0; i < kReportSlots; ++i) {
      const uint64_t p = *reinterpret_cast<volatile uint64_t*>(&reportsHost_[i].progress);
      moved |= p != lastProgress[i];
      lastProgress[i] = p;
    }
    const uint64_t now = nowNs();
    if (moved || !started) lastMoveNs = now;
    if (!inFlight_.empty() && timeoutNs > 0 && now - lastMoveNs > timeoutNs && *abortHost_ == 0) {
      CHORUS_LOG_WARN(kColl, "rank ", comm_.rank(), ": ", inFlight_.front().what, ": no progress for ",
                      comm_.options().timeoutMs, " ms; aborting the kernel");
      comm_.recordAsyncError(Status::kTimeout, "rank " + std::to_string(comm_.rank()) + ": " + inFlight_.front().what +
                                                   ": no progress for " + std::to_string(comm_.options().timeoutMs) +
                                                   " ms (CHORUS_TIMEOUT_MS): a peer never came");
      *abortHost_ = 1;
    }
  }
}

}  // namespace chorus::core

#endif  // CHORUS_BUILD_CUDA
