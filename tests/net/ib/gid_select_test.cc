// The GID a RoCE port is addressed by (transport/net/ib/gid_select.h, CHORUS_IB_GID_INDEX).
#include "transport/net/ib/gid_select.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

namespace chorus::netplugin::ib {
namespace {

ibv_gid_entry entry(uint32_t index, const char* gid, uint32_t type) {
  ibv_gid_entry e{};
  e.gid_index = index;
  if (gid != nullptr) inet_pton(AF_INET6, gid, e.gid.raw);
  e.gid_type = type;
  return e;
}

// A ConnectX RoCE port: link-local v1 and v2, then the interface's IPv4 address as v1 and v2.
std::vector<ibv_gid_entry> connectx() {
  return {entry(0, "fe80::1", IBV_GID_TYPE_ROCE_V1), entry(1, "fe80::1", IBV_GID_TYPE_ROCE_V2),
          entry(2, "::ffff:10.0.0.1", IBV_GID_TYPE_ROCE_V1), entry(3, "::ffff:10.0.0.1", IBV_GID_TYPE_ROCE_V2)};
}

TEST(GidSelect, AutoPrefersRoceV2WithIpv4) {
  std::string why;
  EXPECT_EQ(selectGid(connectx(), -1, &why), 3);
}

TEST(GidSelect, AutoFallsBackInOrder) {
  std::string why;
  // No IPv4: a global IPv6 RoCE v2 GID beats a link-local one.
  std::vector<ibv_gid_entry> t = {entry(0, "fe80::1", IBV_GID_TYPE_ROCE_V2), entry(1, "fd00::5", IBV_GID_TYPE_ROCE_V1),
                                  entry(2, "fd00::5", IBV_GID_TYPE_ROCE_V2)};
  EXPECT_EQ(selectGid(t, -1, &why), 2);
  // Only link-local: RoCE v2 still beats v1.
  t = {entry(0, "fe80::1", IBV_GID_TYPE_ROCE_V1), entry(1, "fe80::1", IBV_GID_TYPE_ROCE_V2)};
  EXPECT_EQ(selectGid(t, -1, &why), 1);
  // Only v1.
  t = {entry(0, nullptr, IBV_GID_TYPE_ROCE_V2), entry(1, "fe80::1", IBV_GID_TYPE_ROCE_V1)};
  EXPECT_EQ(selectGid(t, -1, &why), 1);  // an all-zero GID is an empty slot, whatever its type
  // InfiniBand: the first non-empty entry.
  t = {entry(0, "fe80::2:c9ff:fe00:7", IBV_GID_TYPE_IB)};
  EXPECT_EQ(selectGid(t, -1, &why), 0);
}

TEST(GidSelect, RequestedIndex) {
  std::string why;
  EXPECT_EQ(selectGid(connectx(), 0, &why), 0);
  EXPECT_EQ(selectGid(connectx(), 2, &why), 2);
  EXPECT_EQ(selectGid(connectx(), 4, &why), -1);
  EXPECT_NE(why.find("CHORUS_IB_GID_INDEX=4"), std::string::npos) << why;
  std::vector<ibv_gid_entry> t = {entry(0, "fe80::1", IBV_GID_TYPE_ROCE_V2), entry(1, nullptr, IBV_GID_TYPE_ROCE_V2)};
  EXPECT_EQ(selectGid(t, 1, &why), -1);  // empty slot
}

TEST(GidSelect, EmptyTable) {
  std::string why;
  EXPECT_EQ(selectGid({}, -1, &why), -1);
  EXPECT_FALSE(why.empty());
}

}  // namespace
}  // namespace chorus::netplugin::ib
