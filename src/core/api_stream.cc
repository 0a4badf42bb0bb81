// C API: host streams.
#include "chorus/chorus.h"
#include "core/api_guard.h"
#include "core/handle_registry.h"
#include "core/host_stream.h"

using chorus::Status;
using chorus::core::apiGuard;

extern "C" {

chorusResult_t chorusStreamCreate(chorusStream_t* stream) {
  return apiGuard("chorusStreamCreate", nullptr, [&] {
    CHORUS_CHECK_ARG(stream != nullptr, "stream is NULL");
    auto* s = new chorus::core::HostStream();
    chorus::core::streamHandles().add(s);
    *stream = s;
    return chorusSuccess;
  });
}

chorusResult_t chorusStreamSynchronize(chorusStream_t stream) {
  return apiGuard("chorusStreamSynchronize", nullptr, [&] {
    chorus::core::HostStream* s = chorus::core::checkStream(stream);
    if (s == nullptr) return chorusSuccess;  // the NULL stream's work completes before its call returns
    const chorus::Failure f = s->synchronize();
    if (!f.ok()) f.raise();
    return chorusSuccess;
  });
}

chorusResult_t chorusStreamQuery(chorusStream_t stream) {
  return apiGuard("chorusStreamQuery", nullptr, [&] {
    chorus::core::HostStream* s = chorus::core::checkStream(stream);
    if (s == nullptr) return chorusSuccess;
    const chorus::Failure f = s->query();
    if (f.status == Status::kInProgress) return chorusInProgress;
    if (!f.ok()) f.raise();
    return chorusSuccess;
  });
}

chorusResult_t chorusStreamDestroy(chorusStream_t stream) {
  return apiGuard("chorusStreamDestroy", nullptr, [&] {
    CHORUS_CHECK_ARG(stream != nullptr, "stream is NULL");
    chorus::core::HostStream* s = chorus::core::checkStream(stream);
    chorus::core::streamHandles().retire(s);  // its address is never reused: a stale handle stays invalid
    return chorusSuccess;
  });
}

}  // extern "C"
