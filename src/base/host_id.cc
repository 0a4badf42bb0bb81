#include "base/host_id.h"

#include <unistd.h>

#include <fstream>

#include "base/params.h"

namespace chorus {

uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string hostId() {
  std::string forced = param::HostId();
  if (!forced.empty()) return forced;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::string boot;
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::getline(f, boot);
  return std::string(host) + "/" + boot;
}

uint64_t hostHash() {
  return fnv1a64(hostId());
}

}  // namespace chorus
