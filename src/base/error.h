// Errors. A failure anywhere in the C++ core is a chorus::Error (a Status and a message), thrown where it is
// found by the CHORUS_* macros below: in argument checks, in communicator set-up, and in the data path (a
// Primitives call, a FIFO wait that sees a closed peer or its deadline, the point-to-point engine). Nothing
// returns error codes inward. An Error unwinds to the nearest boundary:
//
//   1. The C API boundary (src/core/api_guard.h). Every exported function body runs inside apiGuard(), which
//      maps the Error to chorusResult_t (the Status values equal it) and records the message for
//      chorusGetLastError. The path from a progress loop to the C return code therefore is:
//        throw in the loop -> boundary 2 captures a Failure -> the reporting call raises it -> boundary 1.
//   2. The end of a launched work (src/core/launch.cc, executeLaunch). Work runs on the caller's thread, on a
//      communicator's worker or on a host stream's thread, and an exception cannot cross threads: the Error is
//      captured there as a Failure (below), recorded as the communicator's asynchronous error
//      (chorusCommGetAsyncError) and its connections are closed so that peers fail at once. The thread that
//      reports it raises it again: a blocking call at once (core/group.cc), chorusStreamSynchronize later.
//   3. Threads that must outlive a failure and hand it on the same way: a non-blocking init's thread and
//      chorusCommInitAll's rank threads (core/init.cc, core/api_comm.cc), the bootstrap endpoint's service
//      thread (it drops the failing connection), the CUDA watchdog (kernels cannot throw: they stop and set a
//      status word, which the watchdog records as the asynchronous error, core/device_comm.h).
//
// Besides the boundaries, these places catch an Error to act on it, and either rethrow or turn it into a value:
//   - a FIFO wait (transport/fifo.cc) rethrows its wait's error naming what it waited for and on which
//     connection, and forgives a peer check that fails (the peer exited cleanly) when the data it waits for is
//     already there;
//   - the shared-memory transport (transport/shm/transport.cc) rethrows a failure to open a peer's segment as
//     chorusRemoteError naming the peer when that peer is gone;
//   - the bootstrap's outgoing connect (bootstrap/outgoing.cc) rethrows a timeout as the remote error it
//     means, and failure notices to peers that are already gone are dropped (bootstrap/bootstrap_impl.cc);
//   - a failed set-up tells the peers why, then rethrows (core/init.cc);
//   - destroying a communicator escalates a timed-out flush to an abort, and finalize records its error in the
//     communicator before it returns it (core/api_comm.cc);
//   - the failed-ranks agreement counts a peer failure as a failed rank (core/failed_ranks.cc), and a peer's
//     failure notice is read as a message (Comm::awaitFailureNotice, core/comm.cc);
//   - an optional topology load logs its failure (core/topo_setup.cc).
#pragma once

#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "base/status.h"

namespace chorus {

class Error : public std::runtime_error {
 public:
  Error(Status status, const std::string& msg) : std::runtime_error(msg), status_(status) {}
  Status status() const { return status_; }

 private:
  Status status_;
};

// An Error captured at a boundary (see above), to be raised again by the call that reports it.
struct Failure {
  Status status = Status::kSuccess;
  std::string message;

  bool ok() const { return status == Status::kSuccess; }
  // Throws it as a chorus::Error with the same status and message.
  [[noreturn]] void raise() const { throw Error(status, message); }
};

namespace detail {

// Concatenates any streamable values into one string.
template <typename... Args>
std::string concat(Args&&... args) {
  if constexpr (sizeof...(Args) == 0) {
    return std::string();
  } else {
    std::ostringstream os;
    (os << ... << std::forward<Args>(args));
    return os.str();
  }
}

[[noreturn]] void throwError(Status status, const char* file, int line, const std::string& msg);
// CHORUS_CHECK_CUDA's failure: "<context or expression> failed: <message> (<code>)".
[[noreturn]] void throwCudaError(const char* file, int line, int code, const char* message, const char* expr,
                                 const std::string& context);

}  // namespace detail
}  // namespace chorus

// Throws chorus::Error(status) with a message made of the remaining arguments.
#define CHORUS_THROW(status, ...) \
  ::chorus::detail::throwError((status), __FILE__, __LINE__, ::chorus::detail::concat(__VA_ARGS__))

// Internal invariants: a failure is a bug in Chorus (chorusInternalError).
#define CHORUS_ENFORCE(cond, ...)                                                                          \
  do {                                                                                                     \
    if (!(cond)) CHORUS_THROW(::chorus::Status::kInternalError, "check failed: " #cond ". ", __VA_ARGS__); \
  } while (0)

#define CHORUS_ENFORCE_EQ(a, b, ...)                                                                                   \
  do {                                                                                                                 \
    const auto& chorus_a_ = (a);                                                                                       \
    const auto& chorus_b_ = (b);                                                                                       \
    if (!(chorus_a_ == chorus_b_))                                                                                     \
      CHORUS_THROW(::chorus::Status::kInternalError, "check failed: " #a " == " #b " (", chorus_a_, " vs ", chorus_b_, \
                   "). ", __VA_ARGS__);                                                                                \
  } while (0)

// User input: a failure is chorusInvalidArgument with a message that names the argument.
#define CHORUS_CHECK_ARG(cond, ...)                                             \
  do {                                                                          \
    if (!(cond)) CHORUS_THROW(::chorus::Status::kInvalidArgument, __VA_ARGS__); \
  } while (0)

// API misuse (wrong order of calls, wrong state): chorusInvalidUsage.
#define CHORUS_CHECK_USAGE(cond, ...)                                        \
  do {                                                                       \
    if (!(cond)) CHORUS_THROW(::chorus::Status::kInvalidUsage, __VA_ARGS__); \
  } while (0)

// A system call that returns -1 and sets errno: chorusSystemError naming the call and errno.
#define CHORUS_CHECK_SYS(expr, ...)                                                                      \
  ([&]() {                                                                                               \
    auto chorus_rc_ = (expr);                                                                            \
    if (chorus_rc_ == -1) {                                                                              \
      int chorus_errno_ = errno;                                                                         \
      CHORUS_THROW(::chorus::Status::kSystemError, #expr " failed: ", std::strerror(chorus_errno_), " ", \
                   ::chorus::detail::concat(__VA_ARGS__));                                               \
    }                                                                                                    \
    return chorus_rc_;                                                                                   \
  }())

// A CUDA runtime call (or a cudaError_t): anything but cudaSuccess is chorusUnhandledCudaError naming the call,
// or the context given after it, and the runtime's message. The one CUDA check of the library; it expands to
// cudaGetErrorString, so only files that include <cuda_runtime.h> (CHORUS_BUILD_CUDA) use it.
#define CHORUS_CHECK_CUDA(expr, ...)                                                          \
  do {                                                                                        \
    const auto chorus_cuda_rc_ = (expr);                                                      \
    if (chorus_cuda_rc_ != cudaSuccess)                                                       \
      ::chorus::detail::throwCudaError(__FILE__, __LINE__, static_cast<int>(chorus_cuda_rc_), \
                                       cudaGetErrorString(chorus_cuda_rc_), #expr,            \
                                       ::chorus::detail::concat(__VA_ARGS__));                \
  } while (0)
