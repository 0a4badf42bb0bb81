// libchorus-net-ibfake.so: the ib plugin over the fake verbs provider (fake_verbs.h), for the conformance
// suite (net_conformance --in-process), which loads it through CHORUS_NET_PLUGIN.
#include "net/ib/fake_verbs.h"
#include "transport/net/ib/ib_plugin.h"

namespace {

chorusNetResult_t initFake(chorusNetLogger_t logger, const char* listenAddress) {
  return chorus::netplugin::ib::initWith(chorus::ibfake::fakeVerbs(), logger, listenAddress);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const chorusNet_v1_t chorusNetPlugin_v1 =
    chorus::netplugin::ib::makeIbPlugin("ib-fake", initFake);
