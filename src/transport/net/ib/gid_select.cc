#include "transport/net/ib/gid_select.h"

#include <cstring>

namespace chorus::netplugin::ib {
namespace {

bool ipv4Mapped(const ibv_gid& g) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return memcmp(g.raw, prefix, sizeof(prefix)) == 0;
}

bool linkLocal(const ibv_gid& g) {
  return g.raw[0] == 0xfe && (g.raw[1] & 0xc0) == 0x80;
}

}  // namespace

bool gidEmpty(const ibv_gid& gid) {
  static const ibv_gid zero{};
  return memcmp(gid.raw, zero.raw, sizeof(zero.raw)) == 0;
}

int selectGid(const std::vector<ibv_gid_entry>& table, int requested, std::string* why) {
  if (requested >= 0) {
    for (const ibv_gid_entry& e : table) {
      if (static_cast<int>(e.gid_index) == requested && !gidEmpty(e.gid)) return requested;
    }
    *why = "CHORUS_IB_GID_INDEX=" + std::to_string(requested) + " names no GID of this port (" +
           std::to_string(table.size()) + " entries)";
    return -1;
  }
  // Best first: each rule is tried over the whole table before the next.
  const auto rules = {
      +[](const ibv_gid_entry& e) { return e.gid_type == IBV_GID_TYPE_ROCE_V2 && ipv4Mapped(e.gid); },
      +[](const ibv_gid_entry& e) { return e.gid_type == IBV_GID_TYPE_ROCE_V2 && !linkLocal(e.gid); },
      +[](const ibv_gid_entry& e) { return e.gid_type == IBV_GID_TYPE_ROCE_V2; },
      +[](const ibv_gid_entry& e) { return e.gid_type == IBV_GID_TYPE_ROCE_V1; },
      +[](const ibv_gid_entry&) { return true; },
  };
  for (auto rule : rules) {
    for (const ibv_gid_entry& e : table) {
      if (!gidEmpty(e.gid) && rule(e)) return static_cast<int>(e.gid_index);
    }
  }
  *why = "the port has no GID";
  return -1;
}

}  // namespace chorus::netplugin::ib
