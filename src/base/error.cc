#include "base/error.h"

#include "base/logging.h"

namespace chorus {

const char* statusName(Status s) {
  switch (s) {
    case Status::kSuccess: return "success";
    case Status::kUnhandledCudaError: return "unhandled cuda error";
    case Status::kSystemError: return "system error";
    case Status::kInternalError: return "internal error";
    case Status::kInvalidArgument: return "invalid argument";
    case Status::kInvalidUsage: return "invalid usage";
    case Status::kRemoteError: return "remote error";
    case Status::kInProgress: return "in progress";
    case Status::kTimeout: return "timeout";
  }
  return "unknown status";
}

namespace detail {

void throwError(Status status, const char* file, int line, const std::string& msg) {
  // Internal errors carry the source position; user errors read better without it.
  if (status == Status::kInternalError) {
    throw Error(status, concat(msg, " [", file, ":", line, "]"));
  }
  CHORUS_LOG_TRACE(kAll, "error at ", file, ":", line, ": ", msg);
  throw Error(status, msg);
}

void throwCudaError(const char* file, int line, int code, const char* message, const char* expr,
                    const std::string& context) {
  throwError(Status::kUnhandledCudaError, file, line,
             concat(context.empty() ? expr : context.c_str(), " failed: ", message, " (", code, ")"));
}

}  // namespace detail
}  // namespace chorus
