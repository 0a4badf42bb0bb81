// NCCL's version, error, debug and communicator calls, forwarded to Chorus.
#include <vector>

#include "device_policy.h"
#include "nccl_abi.h"
#include "nccl_env.h"

using chorus::nccl::fromNccl;
using chorus::nccl::toNccl;

namespace {

// The device of a rank that NCCL would put on the current CUDA device.
int currentRankDevice() {
  return chorus::nccl::cudaRanks() ? chorus::nccl::currentDevice() : CHORUS_DEVICE_HOST;
}

}  // namespace

NCCL_COMPAT_API(ncclResult_t, ncclGetVersion, int* version);
ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return toNccl(chorusGetVersion(nullptr));  // Chorus names the argument
  *version = NCCL_COMPAT_VERSION_CODE;
  return ncclSuccess;
}

NCCL_COMPAT_API(const char*, ncclGetErrorString, ncclResult_t result);
const char* ncclGetErrorString(ncclResult_t result) {
  return chorusGetErrorString(static_cast<chorusResult_t>(result));
}

NCCL_COMPAT_API(const char*, ncclGetLastError, ncclComm_t comm);
const char* ncclGetLastError(ncclComm_t comm) {
  return chorusGetLastError(comm);
}

NCCL_COMPAT_API(void, ncclResetDebugInit);
void ncclResetDebugInit() {
  chorus::nccl::adoptNcclEnvironment();
  chorusResetDebugInit();
}

NCCL_COMPAT_API(ncclResult_t, ncclGetUniqueId, ncclUniqueId* uniqueId);
ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  return toNccl(chorusGetUniqueId(uniqueId));
}

NCCL_COMPAT_API(ncclResult_t, ncclCommInitRankConfig, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                ncclConfig_t* config);
ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config) {
  chorusConfig_t c = fromNccl(config, currentRankDevice());
  return toNccl(chorusCommInitRankConfig(comm, nranks, commId, rank, &c));
}

NCCL_COMPAT_API(ncclResult_t, ncclCommInitRank, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank);
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return ncclCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

NCCL_COMPAT_API(ncclResult_t, ncclCommInitRankScalable, ncclComm_t* newcomm, int nranks, int myrank, int nId,
                ncclUniqueId* commIds, ncclConfig_t* config);
ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                      ncclConfig_t* config) {
  chorusConfig_t c = fromNccl(config, currentRankDevice());
  return toNccl(chorusCommInitRankScalable(newcomm, nranks, myrank, nId, commIds, &c));
}

// NCCL's NULL devlist means devices 0..ndev-1; on host ranks every rank is a host rank, whatever the devlist.
NCCL_COMPAT_API(ncclResult_t, ncclCommInitAll, ncclComm_t* comm, int ndev, const int* devlist);
ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  if (!chorus::nccl::cudaRanks() || ndev < 1) return toNccl(chorusCommInitAll(comm, ndev, nullptr));
  std::vector<int> devices(static_cast<size_t>(ndev));
  for (int i = 0; i < ndev; ++i) devices[i] = devlist != nullptr ? devlist[i] : i;
  return toNccl(chorusCommInitAll(comm, ndev, devices.data()));
}

NCCL_COMPAT_API(ncclResult_t, ncclCommFinalize, ncclComm_t comm);
ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  return toNccl(chorusCommFinalize(comm));
}

NCCL_COMPAT_API(ncclResult_t, ncclCommDestroy, ncclComm_t comm);
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return toNccl(chorusCommDestroy(comm));
}

NCCL_COMPAT_API(ncclResult_t, ncclCommAbort, ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return toNccl(chorusCommAbort(comm));
}

NCCL_COMPAT_API(ncclResult_t, ncclCommRevoke, ncclComm_t comm, int revokeFlags);
ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  return toNccl(chorusCommRevoke(comm, revokeFlags));
}

NCCL_COMPAT_API(ncclResult_t, ncclCommSplit, ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                ncclConfig_t* config);
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  if (config == nullptr) return toNccl(chorusCommSplit(comm, color, key, newcomm, nullptr));  // inherit
  int device = CHORUS_DEVICE_HOST;
  if (chorusCommCuDevice(comm, &device) != chorusSuccess) device = CHORUS_DEVICE_HOST;
  chorusConfig_t c = fromNccl(config, device);
  return toNccl(chorusCommSplit(comm, color, key, newcomm, &c));
}

NCCL_COMPAT_API(ncclResult_t, ncclCommShrink, ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags);
ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                            ncclConfig_t* config, int shrinkFlags) {
  if (config == nullptr) {
    return toNccl(chorusCommShrink(comm, excludeRanksList, excludeRanksCount, newcomm, nullptr, shrinkFlags));
  }
  int device = CHORUS_DEVICE_HOST;
  if (chorusCommCuDevice(comm, &device) != chorusSuccess) device = CHORUS_DEVICE_HOST;
  chorusConfig_t c = fromNccl(config, device);
  return toNccl(chorusCommShrink(comm, excludeRanksList, excludeRanksCount, newcomm, &c, shrinkFlags));
}

NCCL_COMPAT_API(ncclResult_t, ncclCommGetAsyncError, ncclComm_t comm, ncclResult_t* asyncError);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  chorusResult_t e = chorusSuccess;
  const chorusResult_t rc = chorusCommGetAsyncError(comm, asyncError != nullptr ? &e : nullptr);
  if (rc == chorusSuccess) *asyncError = toNccl(e);
  return toNccl(rc);
}

NCCL_COMPAT_API(ncclResult_t, ncclCommCount, const ncclComm_t comm, int* count);
ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  return toNccl(chorusCommCount(comm, count));
}

NCCL_COMPAT_API(ncclResult_t, ncclCommCuDevice, const ncclComm_t comm, int* device);
ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  return toNccl(chorusCommCuDevice(comm, device));
}

NCCL_COMPAT_API(ncclResult_t, ncclCommUserRank, const ncclComm_t comm, int* rank);
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  return toNccl(chorusCommUserRank(comm, rank));
}
