// Status codes of the C++ core. Values equal chorusResult_t (0..7 are NCCL's ncclResult_t; kTimeout is Chorus's
// own, after NCCL's range); the C API boundary converts with a static_cast that src/core checks with
// static_asserts. Base cannot include the public header
// (it sits above every layer), hence this mirror.
#pragma once

namespace chorus {

enum class Status : int {
  kSuccess = 0,
  kUnhandledCudaError = 1,
  kSystemError = 2,
  kInternalError = 3,
  kInvalidArgument = 4,
  kInvalidUsage = 5,
  kRemoteError = 6,
  kInProgress = 7,
  kTimeout = 9,  // 8 is chorusNumResults
};

// A short name such as "invalid argument", used in messages.
const char* statusName(Status s);

}  // namespace chorus
