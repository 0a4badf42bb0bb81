// Errors inside the C++ core are exceptions of type chorus::Error that carry a Status. They are thrown by the
// CHORUS_* macros below and caught at exactly one place: the C API boundary (src/core/api_guard.h), which
// maps them to chorusResult_t and records the message for chorusGetLastError. Progress loops and algorithm
// bodies never throw; they return a Status.
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
