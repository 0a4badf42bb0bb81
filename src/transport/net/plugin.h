// Choosing and loading the network plugin (net.h) once per process.
//   CHORUS_NET_PLUGIN=path   dlopen(path) and use its chorusNetPlugin_v1 (wins over CHORUS_NET)
//   CHORUS_NET=socket        the built-in TCP plugin (the default)
//   CHORUS_NET=name          libchorus-net-<name>.so ("ucx", "ib", "testsock"), looked for next to the module
//                            that holds this code, in its ../lib, in the build tree, then on the loader's path
// init() runs once per plugin with the address of the interface the bootstrap uses.
#pragma once

#include <string>

#include "transport/net/net.h"

namespace chorus::transport::net {

// The plugin CHORUS_NET_PLUGIN / CHORUS_NET select, loaded and initialized. Throws chorusInvalidArgument
// naming the variable when it names nothing loadable, chorusSystemError with the plugin's reason when its
// init fails (no device, no kernel support).
const chorusNet_v1_t* selectedPlugin();
// The plugin named `name` or loaded from `path` (one of them empty), loaded and initialized; the same errors.
const chorusNet_v1_t* loadPlugin(const std::string& name, const std::string& path);

// A plugin's last error, for messages: "ucx: <text>".
std::string pluginError(const chorusNet_v1_t* p, chorusNetResult_t r);

}  // namespace chorus::transport::net
