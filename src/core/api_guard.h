// The C API boundary. Every exported function body runs inside apiGuard(), which catches chorus::Error
// (and anything else) and turns it into a chorusResult_t, records the message for chorusGetLastError (per
// thread, and per communicator when one is involved) and logs it at WARN. Nothing below this file returns
// result codes for errors: it throws, and work that ran on another thread hands its failure back to be raised
// here (base/error.h describes the whole path).
#pragma once

#include <string>
#include <utility>

#include "base/error.h"
#include "base/logging.h"
#include "chorus/chorus.h"

namespace chorus::core {

class Comm;

// Records `msg` as the last error of the calling thread and of comm (may be null).
void recordLastError(Comm* comm, const std::string& msg);
// The calling thread's last error message ("" when none).
const std::string& threadLastError();

chorusResult_t toResult(Status s);

// The communicator the current API call is about: checkComm() notes every handle it validates, so that an
// error of the call is recorded in that communicator too (chorusGetLastError(comm) returns it) even where
// the guard was given none. Scoped to one apiGuard.
void noteCallComm(Comm* comm);
class CallCommScope {
 public:
  CallCommScope();
  ~CallCommScope();
  CallCommScope(const CallCommScope&) = delete;
  CallCommScope& operator=(const CallCommScope&) = delete;
  // `given` if not null, else the communicator checkComm() validated during the call.
  Comm* comm(Comm* given) const;

 private:
  Comm* saved_;
};

// Runs fn(); maps exceptions to a result. `op` names the API call in messages ("chorusAllReduce").
template <typename Fn>
chorusResult_t apiGuard(const char* op, Comm* comm, Fn&& fn) {
  CallCommScope scope;
  try {
    return std::forward<Fn>(fn)();
  } catch (const Error& e) {
    recordLastError(scope.comm(comm), std::string(op) + ": " + e.what());
    return toResult(e.status());
  } catch (const std::bad_alloc&) {
    recordLastError(scope.comm(comm), std::string(op) + ": out of memory");
    return chorusSystemError;
  } catch (const std::exception& e) {
    recordLastError(scope.comm(comm), std::string(op) + ": internal error: " + e.what());
    return chorusInternalError;
  }
}

}  // namespace chorus::core
