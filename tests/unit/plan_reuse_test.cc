// Reusing a plan on moved buffers (collectives/plan/plan_reuse.h): the plan of operations whose buffers all moved
// by one distance is the old plan with every address moved, for every shape planning distinguishes by where the
// buffers lie (in place, in place at an offset, a direct in-place reduction's staging, an in-place all-to-all alone
// and in a group, sends to oneself that land where they are and that do not); and movedBy refuses every change
// that is not one such move.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "collectives/plan/plan.h"
#include "collectives/plan/plan_reuse.h"

namespace chorus::coll {
namespace {

constexpr int kRanks = 4;

// One ring 0..3, a tree rooted at 0 (1 under 0, 2 and 3 under 1) and its mirror.
TopoView topo() {
  TopoView t;
  t.rings = {{0, 1, 2, 3}, {0, 1, 2, 3}};
  t.ringIndex = {1, 1};
  for (TreeView& tree : t.trees) {
    tree.root = 0;
    tree.parent = {-1, 0, 1, 1};
    tree.children = {{1}, {2, 3}, {}, {}};
  }
  return t;
}

PlanContext context(const TopoView& t) {
  PlanContext ctx;
  ctx.rank = 1;
  ctx.nranks = kRanks;
  ctx.topo = &t;
  ctx.slotBytes = 4096;
  return ctx;
}

CollOp op(CollType type, const void* send, void* recv, size_t count, Algo algo = Algo::kRing, int peer = -1) {
  CollOp o;
  o.type = type;
  o.sendbuff = send;
  o.recvbuff = recv;
  o.count = count;
  o.dtype = reduce::DType::kInt32;
  o.algo = algo;
  o.nChannels = 2;
  o.chunkBytes = 1024;
  o.peer = peer;
  return o;
}

// The same operations with every buffer `shift` bytes further on.
std::vector<CollOp> moved(std::vector<CollOp> ops, std::ptrdiff_t shift) {
  for (CollOp& o : ops) {
    if (o.sendbuff != nullptr) o.sendbuff = static_cast<const char*>(o.sendbuff) + shift;
    if (o.recvbuff != nullptr) o.recvbuff = static_cast<char*>(o.recvbuff) + shift;
  }
  return ops;
}

void expectSamePlan(const Plan& a, const Plan& b) {
  ASSERT_EQ(a.colls.size(), b.colls.size());
  for (size_t i = 0; i < a.colls.size(); ++i) {
    EXPECT_EQ(a.colls[i].op.sendbuff, b.colls[i].op.sendbuff) << i;
    EXPECT_EQ(a.colls[i].op.recvbuff, b.colls[i].op.recvbuff) << i;
    EXPECT_EQ(a.colls[i].ownInputCopy, b.colls[i].ownInputCopy) << i;
    EXPECT_EQ(a.colls[i].bytes, b.colls[i].bytes) << i;
  }
  ASSERT_EQ(a.staging.size(), b.staging.size());
  for (size_t i = 0; i < a.staging.size(); ++i) {
    EXPECT_EQ(a.staging[i].base, b.staging[i].base) << i;
    EXPECT_EQ(a.staging[i].offset, b.staging[i].offset) << i;
    EXPECT_EQ(a.staging[i].bytes, b.staging[i].bytes) << i;
    EXPECT_EQ(a.staging[i].before, b.staging[i].before) << i;
  }
  ASSERT_EQ(a.tasks.size(), b.tasks.size());
  for (size_t i = 0; i < a.tasks.size(); ++i) {
    EXPECT_EQ(a.tasks[i].send, b.tasks[i].send) << i;
    EXPECT_EQ(a.tasks[i].peer, b.tasks[i].peer) << i;
    EXPECT_EQ(a.tasks[i].src, b.tasks[i].src) << i;
    EXPECT_EQ(a.tasks[i].dst, b.tasks[i].dst) << i;
    EXPECT_EQ(a.tasks[i].staged, b.tasks[i].staged) << i;
    EXPECT_EQ(a.tasks[i].stagedOffset, b.tasks[i].stagedOffset) << i;
    EXPECT_EQ(a.tasks[i].bytes, b.tasks[i].bytes) << i;
    EXPECT_EQ(a.tasks[i].overlapsPeer, b.tasks[i].overlapsPeer) << i;
  }
  ASSERT_EQ(a.queues.size(), b.queues.size());
  for (size_t i = 0; i < a.queues.size(); ++i) {
    EXPECT_EQ(a.queues[i].peer, b.queues[i].peer) << i;
    EXPECT_EQ(a.queues[i].send, b.queues[i].send) << i;
    EXPECT_EQ(a.queues[i].first, b.queues[i].first) << i;
    EXPECT_EQ(a.queues[i].count, b.queues[i].count) << i;
    EXPECT_EQ(a.queues[i].lanes, b.queues[i].lanes) << i;
  }
  ASSERT_EQ(a.selfCopies.size(), b.selfCopies.size());
  for (size_t i = 0; i < a.selfCopies.size(); ++i) {
    EXPECT_EQ(a.selfCopies[i].src, b.selfCopies[i].src) << i;
    EXPECT_EQ(a.selfCopies[i].dst, b.selfCopies[i].dst) << i;
    EXPECT_EQ(a.selfCopies[i].staged, b.selfCopies[i].staged) << i;
    EXPECT_EQ(a.selfCopies[i].bytes, b.selfCopies[i].bytes) << i;
  }
  EXPECT_EQ(a.connections, b.connections);
}

TEST(PlanReuse, AMovedPlanIsThePlanOfTheMovedOperations) {
  const TopoView t = topo();
  const PlanContext ctx = context(t);
  const size_t n = 64;
  std::vector<int32_t> mem(16 * n * kRanks);
  int32_t* a = mem.data();
  int32_t* b = a + 4 * n * kRanks;
  const std::vector<std::vector<CollOp>> works = {
      {op(CollType::kAllReduce, a, b, n)},                         // out of place
      {op(CollType::kAllReduce, a, a, n, Algo::kTree)},            // in place
      {op(CollType::kAllReduce, a, a, n, Algo::kDirect)},          // direct in place: a staging copy
      {op(CollType::kReduceScatter, a, a + n, n, Algo::kDirect)},  // in place at this rank's block
      {op(CollType::kAllGather, a + n, a, n)},                     // in place at this rank's block
      {op(CollType::kBroadcast, a, b, n, Algo::kTree)},
      {op(CollType::kAllToAll, a, a, n)},                                    // in place, alone: overlapping transfers
      {op(CollType::kAllToAll, a, a, n), op(CollType::kAllToAll, a, a, n)},  // in place in a group: staged
      {op(CollType::kAllToAll, a, b, n), op(CollType::kAllReduce, b, b, n)},
      {op(CollType::kSend, a, nullptr, n, Algo::kRing, 1), op(CollType::kRecv, nullptr, a, n, Algo::kRing, 1),
       op(CollType::kSend, b, nullptr, n, Algo::kRing, 2), op(CollType::kRecv, nullptr, b + n, n, Algo::kRing, 0)},
      {op(CollType::kSend, a, nullptr, n, Algo::kRing, 1), op(CollType::kRecv, nullptr, a, n, Algo::kRing, 1)},
      {op(CollType::kSend, a, nullptr, n, Algo::kRing, 1), op(CollType::kRecv, nullptr, b, n, Algo::kRing, 1)},
  };
  const std::ptrdiff_t shifts[] = {0, 4, static_cast<std::ptrdiff_t>(n * sizeof(int32_t)), 4096, -4, -1000};
  for (size_t w = 0; w < works.size(); ++w) {
    for (std::ptrdiff_t shift : shifts) {
      SCOPED_TRACE(testing::Message() << "work " << w << ", shift " << shift);
      // Shifted within mem: start the work 2 KiB in, so negative shifts stay inside.
      const std::vector<CollOp> ops = moved(works[w], 2048);
      const std::vector<CollOp> there = moved(ops, shift);
      Plan reused;
      planWork(ops, ctx, &reused);
      std::ptrdiff_t d = 12345;
      ASSERT_TRUE(movedBy(ops, there, &d));
      EXPECT_EQ(d, shift);
      moveBuffers(&reused, d);
      Plan fresh;
      planWork(there, ctx, &fresh);
      expectSamePlan(reused, fresh);
    }
  }
}

TEST(PlanReuse, OnlyOneMoveOfEveryBufferIsAMove) {
  std::vector<int32_t> mem(1024);
  int32_t* a = mem.data();
  int32_t* b = a + 512;
  const std::vector<CollOp> planned = {op(CollType::kAllReduce, a, b, 16), op(CollType::kSend, b, nullptr, 8)};
  std::ptrdiff_t d = 0;
  EXPECT_TRUE(movedBy(planned, planned, &d));
  EXPECT_EQ(d, 0);
  auto changed = [&](auto edit) {
    std::vector<CollOp> ops = planned;
    edit(ops);
    std::ptrdiff_t shift = 0;
    return !movedBy(planned, ops, &shift);
  };
  EXPECT_TRUE(changed([&](std::vector<CollOp>& o) { o[0].recvbuff = a; }));      // now in place
  EXPECT_TRUE(changed([&](std::vector<CollOp>& o) { o[0].recvbuff = b + 4; }));  // output alone moved
  EXPECT_TRUE(changed([&](std::vector<CollOp>& o) { o[1].sendbuff = b + 4; }));  // one operation alone moved
  EXPECT_TRUE(changed([&](std::vector<CollOp>& o) { o[1].sendbuff = nullptr; }));
  EXPECT_TRUE(changed([&](std::vector<CollOp>& o) { o[1].recvbuff = a; }));  // null became a buffer
  EXPECT_TRUE(changed([&](std::vector<CollOp>& o) { o[0].count = 17; }));
  EXPECT_TRUE(changed([&](std::vector<CollOp>& o) { o[0].op = reduce::Op::kMax; }));
  EXPECT_TRUE(changed([&](std::vector<CollOp>& o) { o[0].dtype = reduce::DType::kFloat32; }));
  EXPECT_TRUE(changed([&](std::vector<CollOp>& o) { o[0].algo = Algo::kTree; }));
  EXPECT_TRUE(changed([&](std::vector<CollOp>& o) { o[0].nChannels = 1; }));
  EXPECT_TRUE(changed([&](std::vector<CollOp>& o) { o[0].chunkBytes = 2048; }));
  EXPECT_TRUE(changed([&](std::vector<CollOp>& o) { o[1].peer = 2; }));
  EXPECT_TRUE(changed([&](std::vector<CollOp>& o) { o[1].type = CollType::kRecv; }));
  EXPECT_TRUE(changed([&](std::vector<CollOp>& o) { o.pop_back(); }));
  EXPECT_TRUE(changed([&](std::vector<CollOp>& o) { std::swap(o[0], o[1]); }));
  // Every buffer moved alike is a move; the flight recorder's number is not part of the operation.
  EXPECT_FALSE(changed([&](std::vector<CollOp>& o) {
    o = moved(o, 64);
    o[0].recordSeq = 99;
  }));
}

}  // namespace
}  // namespace chorus::coll
