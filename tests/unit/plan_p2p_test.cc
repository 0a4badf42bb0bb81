// Planning of point-to-point work (collectives/plan/plan.h): how an in-place all-to-all is lowered (without a staging
// copy only where it is alone and the executor orders overlapping transfers), self copies, queues, and the
// mismatched sends to oneself that planning refuses.
#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"
#include "collectives/plan/plan.h"

namespace chorus::coll {
namespace {

CollOp allToAll(void* buf, size_t count) {
  CollOp op;
  op.type = CollType::kAllToAll;
  op.sendbuff = buf;
  op.recvbuff = buf;
  op.count = count;
  op.dtype = reduce::DType::kInt32;
  return op;
}

PlanContext context(int rank, int nranks, bool ordersOverlaps) {
  PlanContext ctx;
  ctx.rank = rank;
  ctx.nranks = nranks;
  ctx.slotBytes = 4096;
  ctx.ordersOverlaps = ordersOverlaps;
  return ctx;
}

TEST(PlanP2p, InPlaceAllToAllAloneNeedsNoStaging) {
  std::vector<int32_t> buf(4 * 10);
  Plan plan;
  planWork({allToAll(buf.data(), 10)}, context(1, 4, true), &plan);
  EXPECT_TRUE(plan.staging.empty());
  EXPECT_TRUE(plan.selfCopies.empty()) << "the own block is already where it belongs";
  ASSERT_EQ(plan.queues.size(), 6u);  // a receive and a send queue per peer
  for (size_t q = 0; q < plan.queues.size(); ++q) {
    const P2pQueue& queue = plan.queues[q];
    ASSERT_EQ(queue.count, 1u);
    const P2pTask& t = plan.tasks[queue.first];
    EXPECT_TRUE(t.overlapsPeer);
    EXPECT_EQ(t.staged, -1);
    // Receive before send for each peer, and both name the peer's block.
    EXPECT_EQ(queue.send, q % 2 == 1);
    const char* block = reinterpret_cast<const char*>(buf.data()) + queue.peer * 10 * sizeof(int32_t);
    EXPECT_EQ(t.send ? t.src : t.dst, block);
  }
}

TEST(PlanP2p, InPlaceAllToAllIsStagedOnTheDeviceAndInAGroup) {
  std::vector<int32_t> buf(3 * 10);
  Plan plan;
  planWork({allToAll(buf.data(), 10)}, context(0, 3, false), &plan);  // the device executor
  ASSERT_EQ(plan.staging.size(), 1u);
  EXPECT_EQ(plan.staging[0].bytes, 3 * 10 * sizeof(int32_t));
  ASSERT_EQ(plan.selfCopies.size(), 1u);  // from the staging copy into the own block
  for (const P2pTask& t : plan.tasks) EXPECT_FALSE(t.overlapsPeer);

  planWork({allToAll(buf.data(), 10), allToAll(buf.data(), 10)}, context(0, 3, true), &plan);  // a group
  EXPECT_EQ(plan.staging.size(), 2u);
  for (const P2pTask& t : plan.tasks) EXPECT_FALSE(t.overlapsPeer);
  // Two tasks per (peer, direction), in issue order.
  for (const P2pQueue& q : plan.queues) EXPECT_EQ(q.count, 2u);
}

TEST(PlanP2p, SendsToOneselfMatchReceivesInOrder) {
  std::vector<char> a(8), b(8), c(16), d(16);
  CollOp s1, s2, r1, r2;
  s1.type = s2.type = CollType::kSend;
  r1.type = r2.type = CollType::kRecv;
  s1.peer = s2.peer = r1.peer = r2.peer = 0;
  s1.dtype = s2.dtype = r1.dtype = r2.dtype = reduce::DType::kInt8;
  s1.sendbuff = a.data();
  s1.count = 8;
  s2.sendbuff = c.data();
  s2.count = 16;
  r1.recvbuff = b.data();
  r1.count = 8;
  r2.recvbuff = d.data();
  r2.count = 16;
  Plan plan;
  planWork({r1, s1, s2, r2}, context(0, 2, true), &plan);
  ASSERT_EQ(plan.selfCopies.size(), 2u);
  EXPECT_EQ(plan.selfCopies[0].src, a.data());
  EXPECT_EQ(plan.selfCopies[0].dst, b.data());
  EXPECT_EQ(plan.selfCopies[1].src, c.data());
  EXPECT_EQ(plan.selfCopies[1].dst, d.data());
  EXPECT_TRUE(plan.queues.empty());

  // Sizes that disagree, and a send with no receive, are refused.
  r2.count = 8;
  EXPECT_THROW(planWork({s1, r1, s2, r2}, context(0, 2, true), &plan), Error);
  EXPECT_THROW(planWork({s1, r1, s2}, context(0, 2, true), &plan), Error);
}

// The device executor splits a queue over lanes, one per 512 KiB it carries, at most 8 (kP2pLanes), and few
// enough for the 2 (nranks - 1) queues of every rank sharing a GPU in one process to stay within kDevBlockBudget
// blocks; the host executor keeps one. Every lane of a queue is
// a connection of the plan.
TEST(PlanP2p, QueuesSplitOverLanesByTheirBytesOnTheDevice) {
  std::vector<char> buf(size_t(64) << 20);
  auto sendRecv = [&](int peer, size_t sendBytes, size_t recvBytes) {
    CollOp s;
    s.type = CollType::kSend;
    s.sendbuff = buf.data();
    s.count = sendBytes;
    s.dtype = reduce::DType::kUint8;
    s.peer = peer;
    CollOp r = s;
    r.type = CollType::kRecv;
    r.sendbuff = nullptr;
    r.recvbuff = buf.data() + (size_t(32) << 20);
    r.count = recvBytes;
    return std::vector<CollOp>{s, r};
  };
  struct Case {
    int nranks;
    size_t bytes;
    int ranksPerDevice;  // of one process on one GPU: their blocks share kDevBlockBudget
    int lanes;
  };
  for (const Case& c :
       {Case{2, 1, 1, 1}, Case{2, 512 << 10, 1, 1}, Case{2, (512 << 10) + 1, 1, 2}, Case{2, 3u << 20, 1, 6},
        Case{2, 32u << 20, 1, 8}, Case{5, 32u << 20, 1, 8}, Case{9, 32u << 20, 1, 4}, Case{17, 32u << 20, 1, 2},
        Case{65, 32u << 20, 1, 1}, Case{2, 32u << 20, 4, 8}, Case{4, 32u << 20, 4, 2}, Case{8, 32u << 20, 8, 1}}) {
    TopoView topo;
    topo.ranksPerDevice = c.ranksPerDevice;
    PlanContext ctx = context(0, c.nranks, false);
    ctx.topo = &topo;
    ctx.p2pLanes = kP2pLanes;
    Plan plan;
    planWork(sendRecv(1, c.bytes, 4096), ctx, &plan);
    ASSERT_EQ(plan.queues.size(), 2u);
    const P2pQueue& recv = plan.queues[0];
    const P2pQueue& send = plan.queues[1];
    ASSERT_TRUE(send.send);
    EXPECT_EQ(send.lanes, c.lanes) << c.bytes << " bytes, " << c.nranks << " ranks, " << c.ranksPerDevice << " per GPU";
    EXPECT_EQ(recv.lanes, 1);
    std::vector<ConnKey> want = {{1, kP2pLane, false}};
    for (int l = 0; l < c.lanes; ++l) want.push_back(ConnKey{1, kP2pLane + l, true});
    EXPECT_EQ(plan.connections, want);
    // The host executor's context: one lane.
    ctx.p2pLanes = 1;
    planWork(sendRecv(1, c.bytes, 4096), ctx, &plan);
    EXPECT_EQ(plan.queues[1].lanes, 1);
  }
}

}  // namespace
}  // namespace chorus::coll
