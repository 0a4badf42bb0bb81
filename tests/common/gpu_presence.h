// Whether a GPU test may skip: the GPU tests skip, saying why, on a machine without a GPU, and fail instead when
// the operating system shows an NVIDIA GPU (or CHORUS_REQUIRE_GPU=1 says one must be there) that the CUDA runtime
// cannot use, e.g. a driver older than the statically linked runtime needs: a GPU machine must not pass a GPU
// suite by testing nothing.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace chorus::test {

// Whether the operating system shows an NVIDIA GPU (the driver's list or its device nodes), whatever the CUDA
// runtime makes of it.
inline bool osSeesGpu() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    (void)entry;
    return true;
  }
  for (int i = 0; i < 64; ++i) {
    if (std::filesystem::exists("/dev/nvidia" + std::to_string(i), ec)) return true;
  }
  return false;
}

// True when a GPU must be usable here: the OS shows one, or CHORUS_REQUIRE_GPU=1.
inline bool gpuRequired() {
  const char* req = std::getenv("CHORUS_REQUIRE_GPU");
  return osSeesGpu() || (req != nullptr && std::string(req) == "1");
}

}  // namespace chorus::test

// Skips the current test with `why` (the runtime's reason) when no GPU is required here; fails it otherwise.
#define CHORUS_SKIP_OR_FAIL_WITHOUT_GPU(why)                                                                \
  do {                                                                                                      \
    if (::chorus::test::gpuRequired()) {                                                                    \
      FAIL() << "a GPU is present (or CHORUS_REQUIRE_GPU=1) but the CUDA runtime cannot use it: " << (why); \
    }                                                                                                       \
    GTEST_SKIP() << (why);                                                                                  \
  } while (0)
