#include "device_policy.h"

#include <dlfcn.h>
#include <strings.h>

#include <cstdlib>
#include <initializer_list>

namespace chorus::nccl {

namespace {

// The few CUDA runtime entry points this library uses, from whichever libcudart the process can load (the
// program's own, when it links one). Their cudaError_t is an int; 0 is cudaSuccess.
struct CudaRuntime {
  int (*getDeviceCount)(int*) = nullptr;
  int (*getDevice)(int*) = nullptr;
  int (*malloc)(void**, size_t) = nullptr;
  int (*free)(void*) = nullptr;
  bool loaded = false;

  CudaRuntime() {
    for (const char* name : {"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"}) {
      void* h = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
      if (h == nullptr) continue;
      getDeviceCount = reinterpret_cast<int (*)(int*)>(dlsym(h, "cudaGetDeviceCount"));
      getDevice = reinterpret_cast<int (*)(int*)>(dlsym(h, "cudaGetDevice"));
      malloc = reinterpret_cast<int (*)(void**, size_t)>(dlsym(h, "cudaMalloc"));
      free = reinterpret_cast<int (*)(void*)>(dlsym(h, "cudaFree"));
      loaded = getDeviceCount != nullptr && getDevice != nullptr && malloc != nullptr && free != nullptr;
      if (loaded) return;
    }
  }
};

const CudaRuntime& runtime() {
  static const CudaRuntime rt;
  return rt;
}

bool decide() {
  const char* choice = getenv("CHORUS_NCCL_DEVICE");
  if (choice != nullptr && strcasecmp(choice, "host") == 0) return false;
  if (choice != nullptr && strcasecmp(choice, "cuda") == 0) return true;
  int count = 0;
  return runtime().loaded && runtime().getDeviceCount(&count) == 0 && count > 0;
}

}  // namespace

bool cudaRanks() {
  static const bool cuda = decide();
  return cuda;
}

int currentDevice() {
  int dev = 0;
  if (!runtime().loaded || runtime().getDevice(&dev) != 0) return 0;
  return dev;
}

bool deviceMalloc(void** ptr, size_t size) {
  return runtime().loaded && runtime().malloc(ptr, size) == 0;
}

bool deviceFree(void* ptr) {
  return runtime().loaded && runtime().free(ptr) == 0;
}

}  // namespace chorus::nccl
