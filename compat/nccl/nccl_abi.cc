#include "nccl_abi.h"

#include <algorithm>
#include <cstring>

namespace chorus::nccl {

static_assert(sizeof(ncclResult_t) == sizeof(chorusResult_t) && sizeof(ncclDataType_t) == sizeof(int) &&
              sizeof(ncclRedOp_t) == sizeof(int) && sizeof(ncclScalarResidence_t) == sizeof(int));
static_assert(static_cast<int>(ncclInProgress) == chorusInProgress &&
              static_cast<int>(ncclNumResults) == chorusNumResults);
static_assert(sizeof(ncclUniqueId) == 128 && sizeof(cudaStream_t) == sizeof(chorusStream_t));
static_assert(CHORUS_CONFIG_NCCL_BYTES == 80 && offsetof(chorusConfig_t, nvlinkCentricSched) == 76);
static_assert(sizeof(ncclSimInfo_t) == 24);

ncclResult_t toNccl(chorusResult_t r) {
  const int v = static_cast<int>(r);
  if (v >= 0 && v < chorusNumResults) return static_cast<ncclResult_t>(v);
  return r == chorusTimeout ? ncclRemoteError : ncclInternalError;
}

chorusConfig_t fromNccl(const ncclConfig_t* config, int device) {
  chorusConfig_t c = CHORUS_CONFIG_INITIALIZER;
  if (config != nullptr) {
    size_t size = 0;
    std::memcpy(&size, config, sizeof(size));
    if (size < offsetof(chorusConfig_t, blocking) + sizeof(int)) {
      c.magic = 0;  // not a config: Chorus says so
    } else {
      std::memcpy(static_cast<void*>(&c), config, std::min<size_t>(size, CHORUS_CONFIG_NCCL_BYTES));
    }
    // A valid config also carries `device` (beyond NCCL's bytes); one Chorus rejects keeps the caller's size (at
    // most NCCL's), so that the message names the struct the caller passed, not this one.
    const bool valid = c.magic == CHORUS_CONFIG_MAGIC;
    c.size = valid ? sizeof(c) : std::min<size_t>(size, CHORUS_CONFIG_NCCL_BYTES);
  }
  c.device = device;
  return c;
}

}  // namespace chorus::nccl
