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
thread_local Comm* tlsCallComm = nullptr;  // the communicator checkComm() validated in the current call
}  // namespace

void noteCallComm(Comm* comm) {
  tlsCallComm = comm;
}

CallCommScope::CallCommScope() : saved_(tlsCallComm) {
  tlsCallComm = nullptr;
}
CallCommScope::~CallCommScope() {
  tlsCallComm = saved_;
}
Comm* CallCommScope::comm(Comm* given) const {
  return given != nullptr ? given : tlsCallComm;
}

chorusResult_t toResult(Status s) {
  return static_cast<chorusResult_t>(s);
}

const std::string& threadLastError() {
  return tlsLastError;
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
  if (comm != nullptr) comm->setLastError(full);
  CHORUS_LOG_WARN(kAll, full);
}

}  // namespace chorus::core
