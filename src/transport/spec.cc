#include "transport/spec.h"

#include "base/error.h"

namespace chorus::transport {

std::string connectionName(const ConnectSpec& spec, bool send, const char* transport) {
  const int from = send ? spec.self.rank : spec.peer.rank;
  const int to = send ? spec.peer.rank : spec.self.rank;
  return detail::concat("rank ", from, " -> rank ", to, " lane ", spec.lane, " over ", transport);
}

}  // namespace chorus::transport
