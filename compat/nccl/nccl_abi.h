// NCCL 2.28's ABI (nccl.h) over Chorus's public API. Chorus's types are NCCL's, value for value and byte for
// byte (chorus.h), so the NCCL names are the chorus types under NCCL's names; the static_asserts in
// nccl_abi.cc hold the few facts the forwarding relies on. This library is a client of chorus.h only.
#pragma once

#include <stddef.h>

#include "chorus/chorus.h"

// NCCL's types, as the caller's nccl.h lays them out.
typedef chorusComm_t ncclComm_t;
typedef chorusWindow_t ncclWindow_t;
typedef chorusUniqueId ncclUniqueId;
typedef chorusDataType_t ncclDataType_t;
typedef chorusRedOp_t ncclRedOp_t;
typedef chorusScalarResidence_t ncclScalarResidence_t;
typedef chorusSimInfo_t ncclSimInfo_t;
typedef void* cudaStream_t;  // a pointer (struct CUstream_st*), passed through as chorusStream_t

// ncclResult_t: NCCL 2.28's codes only, 0..7.
typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclNumResults = 8
} ncclResult_t;

// ncclConfig_t is the first CHORUS_CONFIG_NCCL_BYTES bytes of chorusConfig_t.
typedef struct ncclConfig_opaque ncclConfig_t;

// The version ncclGetVersion reports: the NCCL release whose API this library implements.
#define NCCL_COMPAT_VERSION_CODE CHORUS_NCCL_API_VERSION

namespace chorus::nccl {

// Chorus's result as NCCL 2.28 knows it: its own codes unchanged; chorusTimeout (a wait passed its deadline,
// which NCCL 2.28 has no code for) as ncclRemoteError, a peer that did not take part in time; anything
// else as ncclInternalError.
ncclResult_t toNccl(chorusResult_t r);

// A chorusConfig_t from the caller's ncclConfig_t (NULL: none): its `size` bytes of NCCL's fields, Chorus's
// fields at their defaults but `device`. A config too small to be one keeps a bad magic, so that Chorus
// rejects it with its message.
chorusConfig_t fromNccl(const ncclConfig_t* config, int device);

}  // namespace chorus::nccl

// Defines NCCL function `name` and its profiling alias p<name>, both exported: `name` is weak, so that a
// profiler may define it and call p<name>, as with NCCL's own library.
#define NCCL_COMPAT_API(ret, name, ...)                                                     \
  extern "C" __attribute__((visibility("default"), alias(#name))) ret p##name(__VA_ARGS__); \
  extern "C" __attribute__((visibility("default"), weak)) ret name(__VA_ARGS__)
