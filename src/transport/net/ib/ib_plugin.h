// The ib network plugin (CHORUS_NET=ib, libchorus-net-ib.so): RC queue pairs, RDMA write with immediate,
// a registration cache, several QPs per connection (wire.h describes the protocol). Its table is built over a
// verbs provider: rdma-core loaded at run time in the shared library (plugin_entry.cc), an in-process fake
// in tests (tests/net/ib/).
#pragma once

#include "transport/net/ib/verbs.h"
#include "transport/net/net.h"

namespace chorus::netplugin::ib {

// init() over `verbs`: reads CHORUS_IB_HCA, CHORUS_IB_GID_INDEX, CHORUS_IB_QPS_PER_CONNECTION, CHORUS_IB_TIMEOUT
// and CHORUS_IB_RETRY_CNT, finds the ports. chorusNetUnavailable (lastError says why) when there is no usable
// port, chorusNetInvalidArgument for a malformed variable. Later calls return the first success at once.
chorusNetResult_t initWith(const IbVerbs& verbs, chorusNetLogger_t logger, const char* listenAddress);

// The plugin's function table named `name`, whose init is `init` (which calls initWith with its provider).
chorusNet_v1_t makeIbPlugin(const char* name, chorusNetResult_t (*init)(chorusNetLogger_t, const char*));

}  // namespace chorus::netplugin::ib
