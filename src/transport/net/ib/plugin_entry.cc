// libchorus-net-ib.so's entry point: the ib plugin over rdma-core, loaded when init runs.
#include <string>

#include "transport/net/ib/ib_plugin.h"
#include "transport/net/ib/verbs_loader.h"
#include "transport/net/plugin_util.h"

namespace {

chorusNetResult_t initSystem(chorusNetLogger_t logger, const char* listenAddress) {
  static chorus::netplugin::ib::IbVerbs verbs;
  static bool loaded = false;
  std::string why;
  if (!loaded && !chorus::netplugin::ib::loadSystemVerbs(&verbs, &why)) {
    return chorus::netplugin::fail(chorusNetUnavailable, "ib plugin: %s", why.c_str());
  }
  loaded = true;
  return chorus::netplugin::ib::initWith(verbs, logger, listenAddress);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const chorusNet_v1_t chorusNetPlugin_v1 =
    chorus::netplugin::ib::makeIbPlugin("ib", initSystem);
