#include "core/api_guard.h"

#include "core/comm.h"

namespace chorus::core {

static_assert(static_cast<int>(Status::kSuccess) == chorusSuccess);
static_assert(static_cast<int>(Status::kUnhandledCudaError) == chorusUnhandledCudaError);
static_assert(static_cast<int>(Status::kSystemError) == chorusSystemError);
static_assert(static_cast<int>(Status::kInternalError) == chorusInternalError);
static_assert(static_cast<int>(Status::kInvalidArgument) == chorusInvalidArgument);
static_assert(static_cast<int>(Status::kInvalidUsage) == chorusInvalidUsage);
static_assert(static_cast<int>(Status::kRemoteError) == chorusRemoteError);
static_assert(static_cast<int>(Status::kInProgress) == chorusInProgress);
static_assert(static_cast<int>(Status::kTimeout) == chorusTimeout);

namespace {
thread_local std::string tlsLastError;
thread_local const Comm* tlsLastErrorComm = nullptr;  // the communicator the thread's last error was about
}  // namespace

chorusResult_t toResult(Status s) {
  return static_cast<chorusResult_t>(s);
}

const std::string& threadLastError() {
  return tlsLastError;
}
const Comm* threadLastErrorComm() {
  return tlsLastErrorComm;
}

void recordLastError(Comm* comm, const std::string& msg) {
  // Messages from waits already name the rank ("rank 2: recv from rank 1 ..."): name it once.
  std::string full = msg;
  if (comm != nullptr) {
    const std::string tag = "rank " + std::to_string(comm->rank()) + ": ";
    if (full.find(tag) == std::string::npos) full = tag + full;
    for (size_t at; (at = full.find(tag + tag)) != std::string::npos;) full.erase(at, tag.size());
  }
  tlsLastError = full;
  tlsLastErrorComm = comm;
  if (comm != nullptr) comm->setLastError(full);
  CHORUS_LOG_WARN(kAll, full);
}

}  // namespace chorus::core
