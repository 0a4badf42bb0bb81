#include "nccl_env.h"

#include <cstdlib>
#include <initializer_list>
#include <string>

namespace chorus::nccl {

void adoptNcclEnvironment() {
  for (const char* name :
       {"DEBUG", "DEBUG_SUBSYS", "DEBUG_FILE", "SOCKET_IFNAME", "TOPO_FILE", "TOPO_DUMP_FILE", "GRAPH_DUMP_FILE"}) {
    const std::string from = std::string("NCCL_") + name;
    const std::string to = std::string("CHORUS_") + name;
    const char* value = getenv(from.c_str());
    if (value != nullptr && getenv(to.c_str()) == nullptr) setenv(to.c_str(), value, 0);
  }
}

namespace {
// At load, before the program's first call: Chorus reads its variables lazily.
__attribute__((constructor)) void adoptAtLoad() {
  adoptNcclEnvironment();
}
}  // namespace

}  // namespace chorus::nccl
