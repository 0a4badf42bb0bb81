// Fills an IbVerbs (verbs.h) from rdma-core loaded at run time: dlopen("libibverbs.so.1") and dlsym of each
// function, so that the ib plugin neither links against rdma-core nor needs it to load.
#pragma once

#include <string>

#include "transport/net/ib/verbs.h"

namespace chorus::netplugin::ib {

// True when libibverbs.so.1 loaded and has every required symbol; otherwise false with *why saying what is
// missing ("libibverbs.so.1: cannot open shared object file", "libibverbs.so.1 lacks ibv_create_cq"). The
// library stays loaded for the life of the process.
bool loadSystemVerbs(IbVerbs* verbs, std::string* why);

}  // namespace chorus::netplugin::ib
