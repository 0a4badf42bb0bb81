// Which GID of a port the ib plugin addresses its peers by (CHORUS_IB_GID_INDEX). On InfiniBand the LID routes
// and the GID is not used; on RoCE (Ethernet link layer) every packet carries a GRH built from the GID, and the
// GID's type decides the encapsulation (RoCE v2: UDP/IP, routable; v1: Ethernet only).
#pragma once

#include <infiniband/verbs.h>

#include <string>
#include <vector>

namespace chorus::netplugin::ib {

// The GID index to use among `table` (the port's entries; an all-zero GID is an empty slot). `requested` >= 0
// (CHORUS_IB_GID_INDEX) is used when that entry exists and is not empty. -1 chooses as NCCL does by default:
// a RoCE v2 GID holding an IPv4 address (::ffff:a.b.c.d), else a RoCE v2 GID that is not link-local, else any
// RoCE v2 GID, else a RoCE v1 GID, else the first non-empty entry. Returns -1 with *why when nothing fits.
int selectGid(const std::vector<ibv_gid_entry>& table, int requested, std::string* why);

// True when the GID is all zeros (an unused slot of the table).
bool gidEmpty(const ibv_gid& gid);

}  // namespace chorus::netplugin::ib
