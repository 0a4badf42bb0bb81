#include "transport/cuda/cuda_util.h"

#include <atomic>
#include <cstring>
#include <mutex>

#include "base/error.h"
#include "chorus_build_config.h"

#if CHORUS_BUILD_CUDA
#include <cuda_runtime.h>
#endif

namespace chorus::transport::cuda {

const char* memKindName(MemKind k) {
  switch (k) {
    case MemKind::kHost: return "host memory";
    case MemKind::kPinnedHost: return "pinned host memory";
    case MemKind::kDevice: return "CUDA device memory";
    case MemKind::kManaged: return "CUDA managed memory";
  }
  return "?";
}

namespace {

PointerInfo runtimeQuery(const void* p);
std::atomic<PointerQuery> pointerQuery{&runtimeQuery};

}  // namespace

PointerQuery setPointerQuery(PointerQuery q) {
  return pointerQuery.exchange(q == nullptr ? &runtimeQuery : q);
}
PointerInfo queryPointer(const void* p) {
  return pointerQuery.load()(p);
}

void checkBufferPlacement(const void* p, size_t bytes, int commDevice, const char* what) {
  if (p == nullptr || bytes == 0) return;
  const PointerInfo info = queryPointer(p);
  if (commDevice >= 0) {
    CHORUS_CHECK_ARG(info.kind == MemKind::kDevice || info.kind == MemKind::kManaged, what, " (", p, ") is ",
                     memKindName(info.kind), ", but the communicator's rank is on CUDA device ", commDevice,
                     ": pass device memory of that device");
    CHORUS_CHECK_ARG(info.kind == MemKind::kManaged || info.device == commDevice, what, " (", p,
                     ") is device memory of CUDA device ", info.device,
                     ", but the communicator's rank is on CUDA device ", commDevice);
  } else {
    CHORUS_CHECK_ARG(info.kind != MemKind::kDevice, what, " (", p, ") is device memory of CUDA device ", info.device,
                     ", but the communicator is a host communicator: pass host memory");
  }
}

#if CHORUS_BUILD_CUDA

namespace {

PointerInfo runtimeQuery(const void* p) {
  PointerInfo r;
  if (visibleDevices() == 0) return r;
  cudaPointerAttributes a{};
  cudaError_t e = cudaPointerGetAttributes(&a, p);
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear it: an unknown pointer is plain host memory
    return r;
  }
  switch (a.type) {
    case cudaMemoryTypeDevice: r.kind = MemKind::kDevice; break;
    case cudaMemoryTypeManaged: r.kind = MemKind::kManaged; break;
    case cudaMemoryTypeHost: r.kind = MemKind::kPinnedHost; break;
    default: r.kind = MemKind::kHost; break;
  }
  r.device = r.kind == MemKind::kHost ? -1 : a.device;
  return r;
}

}  // namespace

namespace detail {

std::atomic<int> knownDevices{-1};

int countDevices(std::string* why) {
  static std::once_flag once;
  static int count = 0;
  static std::string reason;
  std::call_once(once, [] {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      reason = cudaGetErrorString(e);
      cudaGetLastError();
      n = 0;
    } else if (n == 0) {
      reason = "cudaGetDeviceCount returned 0 devices";
    }
    count = n;
    knownDevices.store(n, std::memory_order_release);
  });
  if (why != nullptr) *why = reason;
  return count;
}

}  // namespace detail

int currentDevice() {
  int d = 0;
  CHORUS_CHECK_CUDA(cudaGetDevice(&d));
  return d;
}

void setDevice(int device) {
  CHORUS_CHECK_CUDA(cudaSetDevice(device));
}

DeviceScope::DeviceScope(int device) {
  cudaGetDevice(&prev_);
  if (prev_ != device) CHORUS_CHECK_CUDA(cudaSetDevice(device));
  set_ = prev_ != device;
}

DeviceScope::~DeviceScope() {
  if (set_) cudaSetDevice(prev_);
}

int streamDevice(void* stream) {
  if (stream == nullptr) return currentDevice();
  int d = -1;
  CHORUS_CHECK_CUDA(cudaStreamGetDevice(static_cast<cudaStream_t>(stream), &d));
  return d;
}

namespace {

// Runs fn(stream) on a non-blocking stream of its own and waits for it (no other stream's work is waited for:
// other ranks' kernels may spin on this device until this rank's next call).
template <typename Fn>
cudaError_t onPrivateStream(Fn fn) {
  cudaStream_t s = nullptr;
  cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (e != cudaSuccess) return e;
  e = fn(s);
  const cudaError_t sync = cudaStreamSynchronize(s);
  cudaStreamDestroy(s);
  return e != cudaSuccess ? e : sync;
}

}  // namespace

void* deviceAlloc(size_t bytes) {
  void* p = nullptr;
  CHORUS_CHECK_CUDA(cudaMalloc(&p, bytes));
  cudaError_t e = onPrivateStream([&](cudaStream_t s) { return cudaMemsetAsync(p, 0, bytes, s); });
  if (e != cudaSuccess) {
    cudaFree(p);
    CHORUS_CHECK_CUDA(e, "zeroing a new device allocation");
  }
  return p;
}

void copyToDevice(void* dst, const void* src, size_t bytes) {
  CHORUS_CHECK_CUDA(
      onPrivateStream([&](cudaStream_t s) { return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s); }),
      "copying to the device");
}

void deviceFree(void* p) {
  if (p != nullptr) cudaFree(p);
}

void deviceMemset(void* p, int value, size_t bytes) {
  cudaMemset(p, value, bytes);
}

void* mappedHostAlloc(size_t bytes, void** devicePtr) {
  void* p = nullptr;
  CHORUS_CHECK_CUDA(cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  std::memset(p, 0, bytes);
  cudaError_t e = cudaHostGetDevicePointer(devicePtr, p, 0);
  if (e != cudaSuccess) {
    cudaFreeHost(p);
    CHORUS_CHECK_CUDA(e, "cudaHostGetDevicePointer");
  }
  return p;
}

void mappedHostFree(void* p) {
  if (p != nullptr) cudaFreeHost(p);
}

void ipcGetHandle(void* devicePtr, uint8_t handle[64]) {
  static_assert(sizeof(cudaIpcMemHandle_t) == 64, "IPC handle size");
  cudaIpcMemHandle_t h;
  CHORUS_CHECK_CUDA(cudaIpcGetMemHandle(&h, devicePtr));
  std::memcpy(handle, &h, sizeof(h));
}

void* ipcOpenHandle(const uint8_t handle[64]) {
  cudaIpcMemHandle_t h;
  std::memcpy(&h, handle, sizeof(h));
  void* p = nullptr;
  CHORUS_CHECK_CUDA(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess));
  return p;
}

void ipcCloseHandle(void* p) {
  if (p != nullptr) cudaIpcCloseMemHandle(p);
}

bool enablePeerAccess(int device, int peer) {
  if (device == peer) return true;
  int can = 0;
  if (cudaDeviceCanAccessPeer(&can, device, peer) != cudaSuccess || can == 0) return false;
  int prev = 0;
  CHORUS_CHECK_CUDA(cudaGetDevice(&prev));
  CHORUS_CHECK_CUDA(cudaSetDevice(device));
  cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();
    e = cudaSuccess;
  }
  cudaSetDevice(prev);
  CHORUS_CHECK_CUDA(e, "cudaDeviceEnablePeerAccess");
  return true;
}

#else  // !CHORUS_BUILD_CUDA

namespace {
PointerInfo runtimeQuery(const void*) {
  return PointerInfo{};
}
[[noreturn]] void noCuda(const char* what) {
  CHORUS_THROW(Status::kInvalidUsage, what, ": this library was built without CUDA");
}
}  // namespace

namespace detail {

std::atomic<int> knownDevices{0};  // known from the start: none

int countDevices(std::string* why) {
  if (why != nullptr) *why = "built without CUDA";
  return 0;
}

}  // namespace detail

int currentDevice() {
  noCuda("cudaGetDevice");
}
void setDevice(int) {
  noCuda("cudaSetDevice");
}
DeviceScope::DeviceScope(int) {
  noCuda("cudaSetDevice");
}
DeviceScope::~DeviceScope() = default;
int streamDevice(void*) {
  noCuda("cudaStreamGetDevice");
}
void* deviceAlloc(size_t) {
  noCuda("cudaMalloc");
}
void copyToDevice(void*, const void*, size_t) {
  noCuda("cudaMemcpyAsync");
}
void deviceFree(void*) {}
void deviceMemset(void*, int, size_t) {}
void* mappedHostAlloc(size_t, void**) {
  noCuda("cudaHostAlloc");
}
void mappedHostFree(void*) {}
void ipcGetHandle(void*, uint8_t*) {
  noCuda("cudaIpcGetMemHandle");
}
void* ipcOpenHandle(const uint8_t*) {
  noCuda("cudaIpcOpenMemHandle");
}
void ipcCloseHandle(void*) {}
bool enablePeerAccess(int, int) {
  return false;
}

#endif

}  // namespace chorus::transport::cuda
