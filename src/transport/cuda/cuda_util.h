// The CUDA runtime as the rest of Chorus sees it: free of CUDA types, so that the core and the tests include
// it in every build. In a build without CUDA (CHORUS_BUILD_CUDA 0) visibleDevices() is 0 and every other call
// that needs the runtime throws chorusInvalidUsage.
//
// Pointer checks go through a replaceable query (setPointerQuery) so that the placement rules are tested on
// machines without a GPU.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace chorus::transport::cuda {

namespace detail {
// The device count once known, -1 before (0 from the start in a build without CUDA): read inline on every call of
// every host communicator (buffer placement), where the runtime was asked once.
extern std::atomic<int> knownDevices;
// Asks the runtime (once) and fills knownDevices; with `why`, also the reason for none.
int countDevices(std::string* why);
}  // namespace detail

// Number of CUDA devices visible to this process (cached after the first call); 0 with *why set to the
// runtime's reason ("no CUDA-capable device is detected", "CUDA driver version is insufficient ...", or
// "built without CUDA").
inline int visibleDevices(std::string* why = nullptr) {
  if (why == nullptr) {
    const int n = detail::knownDevices.load(std::memory_order_acquire);
    if (n >= 0) return n;
  }
  return detail::countDevices(why);
}
// The calling thread's current device (cudaGetDevice).
int currentDevice();
// cudaSetDevice; throws chorusUnhandledCudaError.
void setDevice(int device);

// Makes `device` the calling thread's current device for the scope, restoring the previous one after.
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int prev_ = 0;
  bool set_ = false;
};

// Where a pointer lives, as cudaPointerGetAttributes says.
enum class MemKind : int { kHost = 0, kPinnedHost = 1, kDevice = 2, kManaged = 3 };
struct PointerInfo {
  MemKind kind = MemKind::kHost;
  int device = -1;  // kDevice, kManaged (and kPinnedHost: the device it was allocated through)
};
const char* memKindName(MemKind k);
using PointerQuery = PointerInfo (*)(const void* p);
// Replaces the query (tests); nullptr restores the runtime's. Returns the previous one.
PointerQuery setPointerQuery(PointerQuery q);
PointerInfo queryPointer(const void* p);

// The placement rule of the CUDA executor: on a CUDA communicator (commDevice >= 0) a buffer must be device (or
// managed) memory of commDevice; on a host communicator it must not be device memory. Throws
// chorusInvalidArgument naming `what` ("AllReduce: sendbuff") otherwise. Nothing is enqueued before it runs.
void checkBufferPlacement(const void* p, size_t bytes, int commDevice, const char* what);
// The device of a cudaStream_t (NULL: the current device's default stream); throws on a bad stream.
int streamDevice(void* stream);

// Memory. All throw chorusUnhandledCudaError (or chorusSystemError) with the runtime's message.
// cudaMalloc, zeroed before it returns. The zeroing runs on a stream of its own and is waited for: a cudaMemset
// on the legacy stream is not ordered before kernels on the non-blocking streams Chorus launches on, so a kernel
// could read a reused allocation's old contents (a previous FIFO's counters: wrong slots, hangs).
void* deviceAlloc(size_t bytes);
// Copies host memory to device memory and returns once the bytes are there (a private stream, synchronized):
// a pageable cudaMemcpy may return before its DMA ends, and the legacy stream orders nothing on non-blocking ones.
void copyToDevice(void* dst, const void* src, size_t bytes);
void deviceFree(void* p);                               // never throws
void deviceMemset(void* p, int value, size_t bytes);    // cudaMemset; never throws (for closing FIFOs)
void* mappedHostAlloc(size_t bytes, void** devicePtr);  // pinned, device-mapped, zeroed
void mappedHostFree(void* p);                           // never throws
// CUDA IPC: a 64-byte handle of an allocation made by deviceAlloc, and the far side's mapping of it.
void ipcGetHandle(void* devicePtr, uint8_t handle[64]);
void* ipcOpenHandle(const uint8_t handle[64]);
void ipcCloseHandle(void* p);  // never throws
// Enables peer access from `device` to `peer` (idempotent); false when the pair cannot.
bool enablePeerAccess(int device, int peer);

}  // namespace chorus::transport::cuda
