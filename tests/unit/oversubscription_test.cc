// The oversubscription rule (core/oversubscription.h): decided from the affinity masks of all the ranks of a
// host together, never from one rank's own mask (issue 14: under mpirun's default binding each of 2 ranks on
// 2 cores sees 1 CPU, and deciding from that made every wait yield and sleep).
#include <gtest/gtest.h>
#include <sched.h>

#include "core/oversubscription.h"

namespace chorus::core {
namespace {

CpuMask cpus(std::initializer_list<int> list) {
  CpuMask m;
  for (int c : list) m.set(c);
  return m;
}

TEST(CpuMask, SetTestCountUnion) {
  CpuMask a = cpus({0, 63, 64, 1023});
  EXPECT_EQ(a.count(), 4);
  EXPECT_TRUE(a.test(63));
  EXPECT_TRUE(a.test(64));
  EXPECT_FALSE(a.test(1));
  a.set(-1);
  a.set(1024);  // outside the mask: ignored
  EXPECT_EQ(a.count(), 4);
  a |= cpus({1, 63});
  EXPECT_EQ(a.count(), 5);
  EXPECT_TRUE(CpuMask{}.empty());
}

TEST(CpuMask, CurrentMaskHoldsTheRunningCpu) {
  const CpuMask m = currentCpuMask();
  EXPECT_GE(m.count(), 1);
  EXPECT_TRUE(m.test(sched_getcpu()));  // a thread runs only where its mask allows
  EXPECT_LE(m.count(), onlineCpus() > 1024 ? 1024 : onlineCpus());
}

TEST(Oversubscription, BoundOneCoreEachIsNotOversubscribed) {
  // mpirun's default for 2 ranks on 2 cores: each rank bound to its own core.
  EXPECT_FALSE(ranksOutnumberCpus({cpus({0}), cpus({1})}, 2));
  EXPECT_FALSE(ranksOutnumberCpus({cpus({0}), cpus({1}), cpus({2}), cpus({3})}, 64));
}

TEST(Oversubscription, UnboundRanksCountTheSharedCpus) {
  EXPECT_FALSE(ranksOutnumberCpus({cpus({0, 1}), cpus({0, 1})}, 2));
  EXPECT_TRUE(ranksOutnumberCpus({cpus({0, 1}), cpus({0, 1}), cpus({0, 1})}, 2));
  EXPECT_TRUE(ranksOutnumberCpus(std::vector<CpuMask>(8, cpus({0, 1})), 2));
}

TEST(Oversubscription, RanksBoundToOneCoreAreOversubscribed) {
  EXPECT_TRUE(ranksOutnumberCpus({cpus({0}), cpus({0})}, 2));
  // Four ranks bound two by two to two cores: the union has 2 CPUs.
  EXPECT_TRUE(ranksOutnumberCpus({cpus({0}), cpus({0}), cpus({1}), cpus({1})}, 16));
}

TEST(Oversubscription, AOneRankHostIsNeverOversubscribed) {
  EXPECT_FALSE(ranksOutnumberCpus({cpus({5})}, 8));
  EXPECT_FALSE(ranksOutnumberCpus({CpuMask{}}, 1));
}

TEST(Oversubscription, UnknownMasksCountAsEveryOnlineCpu) {
  EXPECT_FALSE(ranksOutnumberCpus({CpuMask{}, CpuMask{}}, 2));
  EXPECT_TRUE(ranksOutnumberCpus({CpuMask{}, CpuMask{}, CpuMask{}}, 2));
  EXPECT_FALSE(ranksOutnumberCpus({CpuMask{}, cpus({0}), cpus({0})}, 4));
}

TEST(Oversubscription, OnlyThisHostsRanksCount) {
  std::vector<transport::PeerInfo> peers(4);
  for (int r = 0; r < 4; ++r) {
    peers[r].rank = r;
    peers[r].hostHash = r < 2 ? 10 : 20;
    peers[r].cpuMask = cpus({r % 2});
  }
  const std::vector<CpuMask> local = localCpuMasks(peers, 10);
  ASSERT_EQ(local.size(), 2u);
  EXPECT_TRUE(local[0].test(0));
  EXPECT_TRUE(local[1].test(1));
  EXPECT_FALSE(ranksOutnumberCpus(local, 2));
}

}  // namespace
}  // namespace chorus::core
