// The ib plugin's process-wide state, filled once by init (ib_plugin.h): the verbs provider, the devices and
// ports found, the settings read from the environment, the address its setup sockets listen on.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "transport/net/ib/devices.h"
#include "transport/net/ib/qp.h"
#include "transport/net/ib/verbs.h"
#include "transport/net/net.h"
#include "transport/net/plugin_util.h"

namespace chorus::netplugin::ib {

struct IbState {
  bool ready = false;
  IbVerbs verbs{};
  std::vector<std::unique_ptr<IbContext>> contexts;
  std::vector<IbPort> ports;
  WireAddress listen;
  int nqps = 2;  // CHORUS_IB_QPS_PER_CONNECTION
  QpTiming timing;
  chorusNetLogger_t logger = nullptr;
};

// The one state of this copy of the plugin.
IbState& ibState();

// Logs through the library's callback (net.h levels: 0 warn, 1 info, 2 trace).
void ibLog(int level, const std::string& message);

}  // namespace chorus::netplugin::ib
