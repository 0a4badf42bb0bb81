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

// The communicator-wide rule: every rank asks it of the same peers and gets the same answer, whichever host it is on.
TEST(Oversubscription, AnyHostOversubscribedIsTheSameForEveryHost) {
  // 5 ranks on 2 hosts of 2 CPUs: 3 unbound on host 10 (oversubscribed), 2 unbound on host 20 (not).
  std::vector<transport::PeerInfo> peers(5);
  for (int r = 0; r < 5; ++r) {
    peers[r].rank = r;
    peers[r].hostHash = r < 3 ? 10 : 20;
    peers[r].cpuMask = cpus({0, 1});
  }
  EXPECT_TRUE(ranksOutnumberCpus(localCpuMasks(peers, 10), 2));
  EXPECT_FALSE(ranksOutnumberCpus(localCpuMasks(peers, 20), 2));
  EXPECT_TRUE(anyHostOversubscribed(peers));
  // Host 10's ranks bound one per core but for the third: still oversubscribed; spread over 3 CPUs: not.
  peers[0].cpuMask = cpus({0});
  peers[1].cpuMask = cpus({1});
  peers[2].cpuMask = cpus({1});
  EXPECT_TRUE(anyHostOversubscribed(peers));
  peers[2].cpuMask = cpus({2});
  EXPECT_FALSE(anyHostOversubscribed(peers));
  // A host with an unknown mask counts as not oversubscribed, wherever the question is asked.
  peers[3].cpuMask = CpuMask{};
  peers[4].cpuMask = cpus({0});
  EXPECT_FALSE(anyHostOversubscribed(peers));
  peers[3].cpuMask = cpus({0});
  EXPECT_TRUE(anyHostOversubscribed(peers));
  EXPECT_FALSE(anyHostOversubscribed({}));
}

}  // namespace
}  // namespace chorus::core
