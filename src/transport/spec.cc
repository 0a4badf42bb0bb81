#include "transport/spec.h"

#include "base/error.h"
#include "base/params.h"

namespace chorus::transport {

std::string connectionName(const ConnectSpec& spec, bool send, const char* transport) {
  int from = send ? spec.self.rank : spec.peer.rank;
  int to = send ? spec.peer.rank : spec.self.rank;
  std::string tag = spec.tag != 0 ? detail::concat(" tag ", spec.tag) : std::string();
  return detail::concat("rank ", from, " -> rank ", to, " channel ", spec.channel, tag, " over ", transport);
}

size_t slotBytesFor(const ConnectSpec& spec) {
  if (spec.slotBytes != 0) return spec.slotBytes;
  CHORUS_CHECK_ARG(spec.nslots >= 1 && spec.nslots <= kMaxSlots, "FIFO depth ", spec.nslots, " is outside [1, ",
                   kMaxSlots, "]");
  int64_t buff = param::BuffSize();
  CHORUS_CHECK_ARG(buff >= 64 * spec.nslots, "CHORUS_BUFFSIZE=", buff, " is too small for ", spec.nslots, " slots");
  // Keep slots a multiple of 64 bytes so that every slot starts on its own cache line.
  return static_cast<size_t>(buff / spec.nslots) & ~size_t(63);
}

}  // namespace chorus::transport
