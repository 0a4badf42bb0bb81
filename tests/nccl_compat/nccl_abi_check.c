/* chorus.h against NCCL 2.28's own nccl.h (the CUDA toolkit's, never a copy in this tree), at compile time: every
 * enum value, every macro, the layout of ncclConfig_t and ncclSimInfo_t field by field, and the sizes of the types
 * that cross the ABI. A difference does not compile, naming the symbol. At run time: the initializers agree byte for
 * byte (Chorus's own fields come after NCCL's 80 bytes). */
#include <chorus/chorus.h>
#include <nccl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define SAME(nccl, chorus) _Static_assert((long long)(nccl) == (long long)(chorus), #nccl " != " #chorus)
#define SAME_FIELD(type, ctype, f)                                                                           \
  _Static_assert(offsetof(type, f) == offsetof(ctype, f) && sizeof(((type*)0)->f) == sizeof(((ctype*)0)->f), \
                 #type "." #f " is not at chorus's offset")

/* Every enum value of nccl.h, in its order. */
SAME(ncclSuccess, chorusSuccess);
SAME(ncclUnhandledCudaError, chorusUnhandledCudaError);
SAME(ncclSystemError, chorusSystemError);
SAME(ncclInternalError, chorusInternalError);
SAME(ncclInvalidArgument, chorusInvalidArgument);
SAME(ncclInvalidUsage, chorusInvalidUsage);
SAME(ncclRemoteError, chorusRemoteError);
SAME(ncclInProgress, chorusInProgress);
SAME(ncclNumResults, chorusNumResults);
SAME(ncclNumOps_dummy, chorusNumOps_dummy);
SAME(ncclSum, chorusSum);
SAME(ncclProd, chorusProd);
SAME(ncclMax, chorusMax);
SAME(ncclMin, chorusMin);
SAME(ncclAvg, chorusAvg);
SAME(ncclNumOps, chorusNumOps);
SAME(ncclMaxRedOp, chorusMaxRedOp);
SAME(ncclInt8, chorusInt8);
SAME(ncclChar, chorusChar);
SAME(ncclUint8, chorusUint8);
SAME(ncclInt32, chorusInt32);
SAME(ncclInt, chorusInt);
SAME(ncclUint32, chorusUint32);
SAME(ncclInt64, chorusInt64);
SAME(ncclUint64, chorusUint64);
SAME(ncclFloat16, chorusFloat16);
SAME(ncclHalf, chorusHalf);
SAME(ncclFloat32, chorusFloat32);
SAME(ncclFloat, chorusFloat);
SAME(ncclFloat64, chorusFloat64);
SAME(ncclDouble, chorusDouble);
SAME(ncclBfloat16, chorusBfloat16);
SAME(ncclFloat8e4m3, chorusFloat8e4m3);
SAME(ncclFloat8e5m2, chorusFloat8e5m2);
SAME(ncclNumTypes, chorusNumTypes);
SAME(ncclScalarDevice, chorusScalarDevice);
SAME(ncclScalarHostImmediate, chorusScalarHostImmediate);

/* Every macro with a value. */
SAME(NCCL_MAJOR, CHORUS_NCCL_API_MAJOR);
SAME(NCCL_MINOR, CHORUS_NCCL_API_MINOR);
SAME(NCCL_PATCH, CHORUS_NCCL_API_PATCH);
SAME(NCCL_VERSION_CODE, CHORUS_NCCL_API_VERSION);
SAME(NCCL_VERSION(2, 28, 9), CHORUS_VERSION(2, 28, 9));
SAME(NCCL_VERSION(3, 0, 1), CHORUS_VERSION(3, 0, 1));
SAME(NCCL_UNIQUE_ID_BYTES, CHORUS_UNIQUE_ID_BYTES);
SAME(NCCL_CONFIG_UNDEF_INT, CHORUS_CONFIG_UNDEF_INT);
SAME(NCCL_SPLIT_NOCOLOR, CHORUS_SPLIT_NOCOLOR);
_Static_assert(NCCL_UNDEF_FLOAT == CHORUS_UNDEF_FLOAT, "NCCL_UNDEF_FLOAT");
SAME(NCCL_WIN_DEFAULT, CHORUS_WIN_DEFAULT);
SAME(NCCL_WIN_COLL_SYMMETRIC, CHORUS_WIN_COLL_SYMMETRIC);
SAME(NCCL_WIN_REQUIRED_ALIGNMENT, CHORUS_WIN_REQUIRED_ALIGNMENT);
SAME(NCCL_CTA_POLICY_DEFAULT, CHORUS_CTA_POLICY_DEFAULT);
SAME(NCCL_CTA_POLICY_EFFICIENCY, CHORUS_CTA_POLICY_EFFICIENCY);
SAME(NCCL_CTA_POLICY_ZERO, CHORUS_CTA_POLICY_ZERO);
SAME(NCCL_SHRINK_DEFAULT, CHORUS_SHRINK_DEFAULT);
SAME(NCCL_SHRINK_ABORT, CHORUS_SHRINK_ABORT);
SAME(NCCL_REVOKE_DEFAULT, CHORUS_REVOKE_DEFAULT);

/* Layouts: ncclConfig_t field by field (Chorus's fields follow NCCL's 80 bytes), ncclSimInfo_t, the types. */
SAME_FIELD(ncclConfig_t, chorusConfig_t, size);
SAME_FIELD(ncclConfig_t, chorusConfig_t, magic);
SAME_FIELD(ncclConfig_t, chorusConfig_t, version);
SAME_FIELD(ncclConfig_t, chorusConfig_t, blocking);
SAME_FIELD(ncclConfig_t, chorusConfig_t, cgaClusterSize);
SAME_FIELD(ncclConfig_t, chorusConfig_t, minCTAs);
SAME_FIELD(ncclConfig_t, chorusConfig_t, maxCTAs);
SAME_FIELD(ncclConfig_t, chorusConfig_t, netName);
SAME_FIELD(ncclConfig_t, chorusConfig_t, splitShare);
SAME_FIELD(ncclConfig_t, chorusConfig_t, trafficClass);
SAME_FIELD(ncclConfig_t, chorusConfig_t, commName);
SAME_FIELD(ncclConfig_t, chorusConfig_t, collnetEnable);
SAME_FIELD(ncclConfig_t, chorusConfig_t, CTAPolicy);
SAME_FIELD(ncclConfig_t, chorusConfig_t, shrinkShare);
SAME_FIELD(ncclConfig_t, chorusConfig_t, nvlsCTAs);
SAME_FIELD(ncclConfig_t, chorusConfig_t, nChannelsPerNetPeer);
SAME_FIELD(ncclConfig_t, chorusConfig_t, nvlinkCentricSched);
_Static_assert(sizeof(ncclConfig_t) == CHORUS_CONFIG_NCCL_BYTES &&
                   offsetof(chorusConfig_t, device) == sizeof(ncclConfig_t),
               "chorusConfig_t's own fields must follow NCCL's");
SAME_FIELD(ncclSimInfo_t, chorusSimInfo_t, size);
SAME_FIELD(ncclSimInfo_t, chorusSimInfo_t, magic);
SAME_FIELD(ncclSimInfo_t, chorusSimInfo_t, version);
SAME_FIELD(ncclSimInfo_t, chorusSimInfo_t, estimatedTime);
SAME(sizeof(ncclSimInfo_t), sizeof(chorusSimInfo_t));
SAME(sizeof(ncclUniqueId), sizeof(chorusUniqueId));
SAME(sizeof(ncclResult_t), sizeof(chorusResult_t));
SAME(sizeof(ncclRedOp_t), sizeof(chorusRedOp_t));
SAME(sizeof(ncclDataType_t), sizeof(chorusDataType_t));
SAME(sizeof(ncclScalarResidence_t), sizeof(chorusScalarResidence_t));
SAME(sizeof(ncclComm_t), sizeof(chorusComm_t));
SAME(sizeof(ncclWindow_t), sizeof(chorusWindow_t));
SAME(sizeof(cudaStream_t), sizeof(chorusStream_t));

int main(void) {
  ncclConfig_t n = NCCL_CONFIG_INITIALIZER;
  chorusConfig_t c = CHORUS_CONFIG_INITIALIZER;
  if (c.size != sizeof(chorusConfig_t) || n.size != sizeof(ncclConfig_t)) return 1;
  c.size = n.size; /* the one field that differs by design: each struct's own size */
  if (memcmp(&n, &c, sizeof n) != 0) {
    printf("NCCL_CONFIG_INITIALIZER and CHORUS_CONFIG_INITIALIZER differ in NCCL's 80 bytes\n");
    return 1;
  }
  ncclSimInfo_t ns = NCCL_SIM_INFO_INITIALIZER;
  chorusSimInfo_t cs = CHORUS_SIM_INFO_INITIALIZER;
  if (memcmp(&ns, &cs, sizeof ns) != 0) {
    printf("NCCL_SIM_INFO_INITIALIZER and CHORUS_SIM_INFO_INITIALIZER differ\n");
    return 1;
  }
  if (NCCL_COMM_NULL != CHORUS_COMM_NULL || NCCL_CONFIG_UNDEF_PTR != CHORUS_CONFIG_UNDEF_PTR) return 1;
  printf("nccl.h %d.%d.%d and chorus.h agree: 37 enum values, 19 macros, 17 ncclConfig_t fields, the initializers\n",
         NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
  return 0;
}
