// The table of device_kernel_table.h: every type of CHORUS_DEVICE_DTYPES with its launcher.
#include "collectives/device/device_kernel_table.h"

namespace chorus::coll::device {

namespace {
#define CHORUS_LAUNCH_WRAPPER(kType)                                                                                  \
  int launchErased_##kType(const void* l, void* s) {                                                                  \
    return static_cast<int>(launchColl_##kType(*static_cast<const DevCollLaunch*>(l), static_cast<cudaStream_t>(s))); \
  }
CHORUS_DEVICE_DTYPES(CHORUS_LAUNCH_WRAPPER)
#undef CHORUS_LAUNCH_WRAPPER

#define CHORUS_TABLE_ROW(kType) {reduce::DType::kType, #kType, &launchErased_##kType, &collKernelSymbol_##kType},
const DevKernelEntry kTable[] = {CHORUS_DEVICE_DTYPES(CHORUS_TABLE_ROW)};
#undef CHORUS_TABLE_ROW
}  // namespace

const DevKernelEntry* deviceKernelTable(int* n) {
  *n = static_cast<int>(sizeof(kTable) / sizeof(kTable[0]));
  return kTable;
}

int launchDeviceP2p(const void* l, void* s) {
  return static_cast<int>(launchP2p(*static_cast<const DevP2pLaunch*>(l), static_cast<cudaStream_t>(s)));
}

const void* deviceP2pSymbol() {
  return p2pKernelSymbol();
}

}  // namespace chorus::coll::device
