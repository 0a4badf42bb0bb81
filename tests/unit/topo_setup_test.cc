// The channels a communicator prepares (core/topo_setup.h): 2 for host ranks, and for ranks on a GPU as many as
// keep the blocks of the ranks that one process runs on one GPU within kDevBlockBudget: their kernels wait for one
// another, so they must all be resident at once.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "collectives/conn_key.h"
#include "core/config.h"
#include "core/topo_setup.h"
#include "scoped_param.h"
#include "topology/cpu_cache.h"

namespace chorus::core {
namespace {

// nranks ranks on one host: `perProcess` consecutive ranks share a process, each process on GPU 0 (device >= 0)
// or on the host.
std::vector<transport::PeerInfo> ranks(int nranks, int perProcess, int device) {
  std::vector<transport::PeerInfo> peers(nranks);
  for (int r = 0; r < nranks; ++r) {
    peers[r].rank = r;
    peers[r].device = device;
    peers[r].hostHash = 7;
    peers[r].processId = 100 + static_cast<uint64_t>(r / perProcess);
  }
  return peers;
}

TEST(TopoSetup, HostRanksPrepareTwoChannels) {
  const coll::TopoView v = buildTopoView(ranks(4, 1, -1), 0, 0, 0);
  EXPECT_EQ(v.rings.size(), 2u);
  EXPECT_EQ(v.ranksPerDevice, 0);
}

// CHORUS_MIN_CTAS and CHORUS_MAX_CTAS give the config's channel bounds where it leaves them unset (as NCCL_MIN_CTAS
// and NCCL_MAX_CTAS in NCCL), at most kMaxChannels; a config that sets them wins.
TEST(TopoSetup, TheCtaVariablesBoundTheChannelsUnlessTheConfigDoes) {
  EXPECT_EQ(resolveOptions(nullptr).minChannels, 1);
  EXPECT_EQ(resolveOptions(nullptr).maxChannels, 0);
  ScopedParam min("CHORUS_MIN_CTAS", "3");
  ScopedParam max("CHORUS_MAX_CTAS", "1000");
  const CommOptions o = resolveOptions(nullptr);
  EXPECT_EQ(o.minChannels, 3);
  EXPECT_EQ(o.maxChannels, coll::kMaxChannels);
  chorusConfig_t c = CHORUS_CONFIG_INITIALIZER;
  c.minCTAs = 2;
  c.maxCTAs = 4;
  const CommOptions withConfig = resolveOptions(&c);
  EXPECT_EQ(withConfig.minChannels, 2);
  EXPECT_EQ(withConfig.maxChannels, 4);
  // Three channels asked for: a host communicator prepares three rings (two by default).
  EXPECT_EQ(buildTopoView(ranks(4, 1, -1), 0, o.minChannels, 0).rings.size(), 3u);
}

TEST(TopoSetup, RanksSharingAGpuInOneProcessStayWithinTheBlockBudget) {
  struct Case {
    int nranks, perProcess, channels, perDevice;
  };
  for (const Case& c : {Case{2, 1, 16, 1}, Case{2, 2, 16, 2}, Case{4, 4, 16, 4}, Case{8, 8, 8, 8}, Case{8, 2, 16, 2},
                        Case{5, 5, 12, 5}, Case{64, 64, 1, 64}}) {
    for (int rank : {0, c.nranks - 1}) {
      const coll::TopoView v = buildTopoView(ranks(c.nranks, c.perProcess, 0), rank, 0, 0);
      EXPECT_EQ(static_cast<int>(v.rings.size()), c.channels)
          << c.nranks << " ranks, " << c.perProcess << " per process";
      EXPECT_EQ(v.ranksPerDevice, c.perDevice);
      EXPECT_LE(static_cast<int>(v.rings.size()) * c.perDevice, std::max(coll::kDevBlockBudget, c.perDevice));
    }
  }
}

// The config's minChannels cannot take a GPU's ranks past the budget either.
TEST(TopoSetup, MinChannelsDoNotOverrideTheBlockBudget) {
  const coll::TopoView v = buildTopoView(ranks(8, 8, 0), 0, 16, 0);
  EXPECT_EQ(v.rings.size(), 8u);
}

// Outputs stream from half the CPU's last-level cache: 16 MiB on 32 MiB (where the rule was measured), never below
// 1 MiB; 32 MiB is assumed where sysfs says nothing. CHORUS_STREAM_MIN_BYTES overrides it, 0 turning streaming off.
TEST(TopoSetup, OutputsStreamFromHalfTheLastLevelCache) {
  constexpr size_t kMiB = size_t{1} << 20;
  {
    ScopedParam unset("CHORUS_STREAM_MIN_BYTES", nullptr);
    EXPECT_EQ(streamMinBytes(32 * kMiB), 16 * kMiB);
    EXPECT_EQ(streamMinBytes(96 * kMiB), 48 * kMiB);
    EXPECT_EQ(streamMinBytes(1 * kMiB), 1 * kMiB);
    EXPECT_EQ(streamMinBytes(0), 16 * kMiB);
  }
  {
    ScopedParam never("CHORUS_STREAM_MIN_BYTES", "0");
    EXPECT_EQ(streamMinBytes(32 * kMiB), SIZE_MAX);
  }
  {
    ScopedParam forced("CHORUS_STREAM_MIN_BYTES", "12345");
    EXPECT_EQ(streamMinBytes(32 * kMiB), 12345u);
  }
}

// Copies into the peers' slots stream from where the outputs do, unless CHORUS_SLOT_STREAM_MIN_BYTES says otherwise
// (0: never).
TEST(TopoSetup, SlotsStreamWhereOutputsDoUnlessSet) {
  {
    ScopedParam unset("CHORUS_SLOT_STREAM_MIN_BYTES", nullptr);
    EXPECT_EQ(slotStreamMinBytes(size_t{16} << 20), size_t{16} << 20);
    EXPECT_EQ(slotStreamMinBytes(SIZE_MAX), SIZE_MAX);
  }
  {
    ScopedParam never("CHORUS_SLOT_STREAM_MIN_BYTES", "0");
    EXPECT_EQ(slotStreamMinBytes(size_t{16} << 20), SIZE_MAX);
  }
  {
    ScopedParam forced("CHORUS_SLOT_STREAM_MIN_BYTES", "4096");
    EXPECT_EQ(slotStreamMinBytes(size_t{16} << 20), 4096u);
  }
}

// Below the slots' threshold, the store kind is measured from 1 MiB (collectives/host/slot_store_choice.h), unless the
// threshold is set: then it alone decides.
TEST(TopoSetup, SlotStoresAreMeasuredFromOneMiBUnlessTheThresholdIsSet) {
  {
    ScopedParam unset("CHORUS_SLOT_STREAM_MIN_BYTES", nullptr);
    EXPECT_EQ(slotStoresAdaptFrom(), size_t{1} << 20);
    EXPECT_EQ(buildTopoView(ranks(2, 2, -1), 0, 0, 0).slotStoresAdaptFrom, size_t{1} << 20);
  }
  for (const char* set : {"0", "4096"}) {
    ScopedParam forced("CHORUS_SLOT_STREAM_MIN_BYTES", set);
    EXPECT_EQ(slotStoresAdaptFrom(), SIZE_MAX) << set;
    EXPECT_EQ(buildTopoView(ranks(2, 2, -1), 0, 0, 0).slotStoresAdaptFrom, SIZE_MAX) << set;
  }
}

// Every communicator's view carries the threshold for this process's CPU, whatever its ranks (CPU 0's cache here:
// the CPUs of the machines the tests run on have last-level caches of one size).
TEST(TopoSetup, TheViewCarriesTheStreamingThreshold) {
  ScopedParam unset("CHORUS_STREAM_MIN_BYTES", nullptr);
  const size_t want = streamMinBytes(topology::lastLevelCacheBytes(0));
  EXPECT_EQ(buildTopoView(ranks(4, 1, -1), 1, 0, 0).streamMinBytes, want);
  EXPECT_EQ(buildTopoView(ranks(2, 2, -1), 0, 0, 0).streamMinBytes, want);
  ScopedParam slots("CHORUS_SLOT_STREAM_MIN_BYTES", "4096");
  EXPECT_EQ(buildTopoView(ranks(2, 2, -1), 0, 0, 0).slotStreamMinBytes, 4096u);
}

}  // namespace
}  // namespace chorus::core
