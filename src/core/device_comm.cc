#include "core/device_comm.h"

#if CHORUS_BUILD_CUDA

#include <cuda_runtime.h>

#include <chrono>

#include "base/error.h"
#include "base/logging.h"
#include "base/wait.h"
#include "collectives/device/device_launch_args.h"
#include "core/comm.h"
#include "transport/cuda/cuda_descriptor.h"
#include "transport/cuda/cuda_util.h"

namespace chorus::core {

namespace cu = transport::cuda;
using coll::device::DevBlockReport;
using coll::device::DevConn;

namespace {

// Bootstrap tag of a device FIFO descriptor: apart from the host connections' tags (1 << 40 | lane).
uint64_t devConnTag(int lane) {
  return (1ull << 41) | static_cast<uint64_t>(lane);
}

constexpr int kReportSlots = coll::device::kDevMaxP2pQueues;  // >= kMaxChannels blocks of a collective launch
constexpr auto kWatchdogPeriod = std::chrono::milliseconds(5);

void cudaOrThrow(cudaError_t e, const char* what) {
  if (e != cudaSuccess) CHORUS_THROW(Status::kUnhandledCudaError, what, ": ", cudaGetErrorString(e));
}

// Sets the communicator's device for the scope, restoring the caller's.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    cudaGetDevice(&prev_);
    if (prev_ != device) cudaOrThrow(cudaSetDevice(device), "cudaSetDevice");
    set_ = prev_ != device;
  }
  ~DeviceScope() {
    if (set_) cudaSetDevice(prev_);
  }

 private:
  int prev_ = 0;
  bool set_ = false;
};

}  // namespace

void DeviceCommDeleter::operator()(DeviceComm* d) const {
  delete d;
}

DeviceComm::DeviceComm(Comm& comm) : comm_(comm), device_(comm.device()) {
  DeviceScope scope(device_);
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
    cudaOrThrow(cudaMemcpy(d, ring.data(), ring.size() * sizeof(int), cudaMemcpyHostToDevice), "copying the rings");
  }
  cudaStream_t s = nullptr;
  cudaOrThrow(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
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
  DeviceScope scope(device_);
  for (InFlight& f : inFlight_) cudaEventDestroy(static_cast<cudaEvent_t>(f.event));
  for (auto& [k, f] : sends_) releaseFifo(f);
  for (auto& [k, f] : recvs_) releaseFifo(f);
  for (int* r : deviceRings_) cu::deviceFree(r);
  if (stream_ != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
  cu::mappedHostFree(mapped_);
}

void DeviceComm::releaseFifo(Fifo& f) {
  if (f.ownsAlloc) {
    // Tell a sender still attached (another process) that this end is gone.
    cudaMemset(&f.conn.ctrl->closed, 0xff, sizeof(uint32_t));
    cu::deviceFree(f.alloc);
  } else if (f.ipcMapped) {
    cu::ipcCloseHandle(f.alloc);
  }
}

void DeviceComm::postReceivers(const std::vector<coll::ConnKey>& keys) {
  DeviceScope scope(device_);
  std::lock_guard<std::mutex> lock(connMu_);
  const auto& peers = comm_.peers();
  const transport::PeerInfo& self = peers[comm_.rank()];
  for (const coll::ConnKey& k : keys) {
    if (k.send || k.peer == comm_.rank() || recvs_.count(k) != 0) continue;
    const transport::PeerInfo& peer = peers[k.peer];
    WaitContext ctx = comm_.waitContext("connecting the device FIFO from rank " + std::to_string(k.peer));
    CHORUS_CHECK_USAGE(peer.hostHash == self.hostHash, "rank ", k.peer, " is on another host (", peer.hostname,
                       "): CUDA communicators across hosts are not implemented yet (docs/cuda.md)");
    CHORUS_CHECK_USAGE(peer.device >= 0, "rank ", k.peer, " is a host rank in a CUDA communicator");
    Fifo f;
    f.ownsAlloc = true;
    const size_t slotBytes = comm_.slotBytes();
    f.alloc = cu::deviceAlloc(coll::device::devFifoBytes(slotBytes));
    f.conn.ctrl = static_cast<coll::device::DevFifoControl*>(f.alloc);
    f.conn.slots = static_cast<char*>(f.alloc) + coll::device::devFifoSlotsOffset();
    f.conn.slotBytes = slotBytes;
    cu::DevFifoDescriptor d;
    d.device = device_;
    d.processId = self.processId;
    d.slotBytes = slotBytes;
    d.nslots = coll::device::kDevFifoSlots;
    if (peer.processId == self.processId) {
      d.kind = cu::DevFifoKind::kDirect;
      d.pointer = reinterpret_cast<uint64_t>(f.alloc);
    } else {
      d.kind = cu::DevFifoKind::kIpc;
      cu::ipcGetHandle(f.alloc, d.ipcHandle);
    }
    std::vector<uint8_t> bytes = cu::serialize(d);
    recvs_[k] = f;
    comm_.bootstrap().send(k.peer, devConnTag(k.lane), bytes.data(), bytes.size(), ctx);
  }
}

void DeviceComm::connectSenders(const std::vector<coll::ConnKey>& keys) {
  DeviceScope scope(device_);
  std::lock_guard<std::mutex> lock(connMu_);
  for (const coll::ConnKey& k : keys) {
    if (!k.send || k.peer == comm_.rank() || sends_.count(k) != 0) continue;
    WaitContext ctx = comm_.waitContext("connecting the device FIFO to rank " + std::to_string(k.peer));
    cu::DevFifoDescriptor d = cu::parseDevFifoDescriptor(comm_.bootstrap().recv(k.peer, devConnTag(k.lane), ctx));
    Fifo f;
    if (d.kind == cu::DevFifoKind::kDirect) {
      CHORUS_ENFORCE(d.processId == comm_.peers()[comm_.rank()].processId, "direct device FIFO from another process");
      if (d.device != device_) {
        CHORUS_CHECK_USAGE(cu::enablePeerAccess(device_, d.device), "CUDA devices ", device_, " and ", d.device,
                           " cannot access each other's memory (no peer access): not supported yet");
      }
      f.alloc = reinterpret_cast<void*>(d.pointer);
    } else if (d.kind == cu::DevFifoKind::kIpc) {
      f.alloc = cu::ipcOpenHandle(d.ipcHandle);
      f.ipcMapped = true;
    } else {
      CHORUS_THROW(Status::kInvalidUsage, "host-staged device FIFOs (peers on other hosts) are not implemented yet");
    }
    char* base = static_cast<char*>(f.alloc) + d.ipcOffset;
    f.conn.ctrl = reinterpret_cast<coll::device::DevFifoControl*>(base);
    f.conn.slots = base + coll::device::devFifoSlotsOffset();
    f.conn.slotBytes = d.slotBytes;
    sends_[k] = f;
  }
}

DevConn DeviceComm::devSendConn(int peer, int lane) {
  std::lock_guard<std::mutex> lock(connMu_);
  auto it = sends_.find(coll::ConnKey{peer, lane, true});
  CHORUS_ENFORCE(it != sends_.end(), "no device connection to rank ", peer, " lane ", lane);
  return it->second.conn;
}

DevConn DeviceComm::devRecvConn(int peer, int lane) {
  std::lock_guard<std::mutex> lock(connMu_);
  auto it = recvs_.find(coll::ConnKey{peer, lane, false});
  CHORUS_ENFORCE(it != recvs_.end(), "no device connection from rank ", peer, " lane ", lane);
  return it->second.conn;
}

coll::device::DevExecEnv DeviceComm::env() {
  coll::device::DevExecEnv e;
  e.rank = comm_.rank();
  e.nranks = comm_.nranks();
  e.topo = &comm_.topo();
  e.conns = this;
  e.deviceRings = deviceRings_.data();
  e.abortFlag = static_cast<const volatile uint32_t*>(abortDev_);
  e.reports = reportsDev_;
  return e;
}

void DeviceComm::trackLaunch(std::string what) {
  cudaEvent_t ev = nullptr;
  cudaOrThrow(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  cudaError_t e = cudaEventRecord(ev, static_cast<cudaStream_t>(stream_));
  if (e != cudaSuccess) {
    cudaEventDestroy(ev);
    cudaOrThrow(e, "cudaEventRecord");
  }
  std::lock_guard<std::mutex> lock(flightMu_);
  inFlight_.push_back(InFlight{ev, std::move(what)});
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
      inFlight_.pop_front();
    }
    bool moved = false;
    for (int i = 0; i < kReportSlots; ++i) {
      const uint64_t p = *reinterpret_cast<volatile uint64_t*>(&reportsHost_[i].progress);
      moved |= p != lastProgress[i];
      lastProgress[i] = p;
    }
    const uint64_t now = nowNs();
    if (moved || inFlight_.empty()) lastMoveNs = now;
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
