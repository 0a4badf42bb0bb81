// The flight recorder's ring: the last `capacity` operations, oldest first, with their states; nothing at
// capacity 0; a late state change of an overwritten entry is ignored; the dump's lines carry every field.
#include "core/flight_recorder.h"

#include <gtest/gtest.h>

namespace chorus::core {
namespace {

coll::CollOp op(coll::CollType type, size_t count, int root = 0, int peer = -1) {
  coll::CollOp o;
  o.type = type;
  o.count = count;
  o.root = root;
  o.peer = peer;
  o.algo = coll::Algo::kTree;
  o.nChannels = 2;
  return o;
}

TEST(FlightRecorder, KeepsTheLastOperationsOldestFirst) {
  FlightRecorder fr(4, 1, 3, 0xabc);
  for (size_t i = 0; i < 10; ++i) {
    uint64_t seq = fr.queued(op(coll::CollType::kAllReduce, 100 + i));
    EXPECT_EQ(seq, i);
    if (i < 8) fr.started(seq);
    if (i < 7) fr.finished(seq, i != 6);
  }
  std::vector<FrEntry> es = fr.entries();
  ASSERT_EQ(es.size(), 4u);
  EXPECT_EQ(es[0].seq, 6u);
  EXPECT_EQ(es[0].state, FrState::kFailed);
  EXPECT_EQ(es[1].state, FrState::kRunning);
  EXPECT_EQ(es[2].state, FrState::kQueued);
  EXPECT_EQ(es[3].seq, 9u);
  EXPECT_EQ(es[3].count, 109u);
  EXPECT_EQ(es[3].algo, coll::Algo::kTree);
  EXPECT_EQ(es[3].channels, 2);
  EXPECT_EQ(es[3].root, -1);  // all-reduce has no root
  EXPECT_GT(es[3].bytes, 0u);
  EXPECT_GT(es[0].queuedUs, 0);
  EXPECT_GE(es[0].endUs, es[0].startUs);
  // seq 2 was overwritten by seq 6: finishing it changes nothing.
  fr.finished(2, true);
  EXPECT_EQ(fr.entries()[0].state, FrState::kFailed);
}

// A blocking call runs as it is queued: one record says so, with its start at its queueing, and finishing it needs no
// started() first.
TEST(FlightRecorder, AnOperationQueuedRunningIsStartedAtOnce) {
  FlightRecorder fr(4, 0, 2, 7);
  const uint64_t a = fr.queued(op(coll::CollType::kBroadcast, 8, 1), /*running=*/true);
  const uint64_t b = fr.queued(op(coll::CollType::kAllReduce, 9), /*running=*/false);
  std::vector<FrEntry> es = fr.entries();
  ASSERT_EQ(es.size(), 2u);
  EXPECT_EQ(es[0].state, FrState::kRunning);
  EXPECT_GT(es[0].startUs, 0);
  EXPECT_EQ(es[0].startUs, es[0].queuedUs);
  EXPECT_EQ(es[1].state, FrState::kQueued);
  EXPECT_EQ(es[1].startUs, 0);
  fr.finished(a, true);
  fr.finished(b, false);
  es = fr.entries();
  EXPECT_EQ(es[0].state, FrState::kDone);
  EXPECT_GE(es[0].endUs, es[0].startUs);
  EXPECT_EQ(es[1].state, FrState::kFailed);
}

TEST(FlightRecorder, RecordsRootsAndPeers) {
  FlightRecorder fr(8, 0, 4, 1);
  fr.queued(op(coll::CollType::kBroadcast, 5, 3));
  fr.queued(op(coll::CollType::kSend, 6, 0, 2));
  std::vector<FrEntry> es = fr.entries();
  ASSERT_EQ(es.size(), 2u);
  EXPECT_EQ(es[0].root, 3);
  EXPECT_EQ(es[0].peer, -1);
  EXPECT_EQ(es[1].root, -1);
  EXPECT_EQ(es[1].peer, 2);
  std::vector<std::string> lines = fr.dumpLines("why \"quoted\"");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find("FR dump rank=0 nranks=4 comm=0000000000000001 entries=2 issued=2 reason=\"why 'quoted'\""),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find("seq=0 op=Broadcast count=5 dtype=float32 root=3 peer=-1 algo=Tree channels=2"),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[2].find("op=Send count=6 dtype=float32 root=-1 peer=2 algo=P2P"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("state=queued"), std::string::npos) << lines[2];
}

// A capacity that is no power of two keeps exactly that many (the ring rounds up to one, so that a look-up masks
// instead of dividing), and an overwritten entry still ignores its late state changes.
TEST(FlightRecorder, KeepsExactlyACapacityThatIsNoPowerOfTwo) {
  FlightRecorder fr(3, 0, 2, 1);
  for (size_t i = 0; i < 9; ++i) fr.queued(op(coll::CollType::kAllReduce, 10 + i));
  std::vector<FrEntry> es = fr.entries();
  ASSERT_EQ(es.size(), 3u);
  EXPECT_EQ(es[0].seq, 6u);
  EXPECT_EQ(es[2].seq, 8u);
  EXPECT_EQ(es[2].count, 18u);
  fr.finished(4, true);  // seq 4's slot (of the ring's 4) now holds seq 8: nothing changes
  es = fr.entries();
  EXPECT_EQ(es[2].state, FrState::kQueued);
  fr.finished(7, false);
  EXPECT_EQ(fr.entries()[1].state, FrState::kFailed);
}

// The times are the callers': a launch reads the clock once (nowUs) and passes it to every operation's record.
TEST(FlightRecorder, RecordsTheTimesItIsGiven) {
  FlightRecorder fr(4, 0, 2, 1);
  const uint64_t a = fr.queued(op(coll::CollType::kSend, 1, 0, 1), /*running=*/false, 1000);
  const uint64_t b = fr.queued(op(coll::CollType::kRecv, 1, 0, 1), /*running=*/false, 1000);
  fr.started(a, 2000);
  fr.started(b, 2000);
  fr.finished(a, true, 3000);
  fr.finished(b, true, 3000);
  for (const FrEntry& e : fr.entries()) {
    EXPECT_EQ(e.queuedUs, 1000);
    EXPECT_EQ(e.startUs, 2000);
    EXPECT_EQ(e.endUs, 3000);
    EXPECT_EQ(e.state, FrState::kDone);
  }
  const int64_t now = FlightRecorder::nowUs();
  EXPECT_GT(now, int64_t{1600000000} * 1000000);  // microseconds since the epoch (after 2020)
}

TEST(FlightRecorder, CapacityZeroRecordsNothing) {
  FlightRecorder fr(0, 0, 2, 1);
  EXPECT_FALSE(fr.enabled());
  fr.queued(op(coll::CollType::kAllReduce, 1));
  EXPECT_TRUE(fr.entries().empty());
  EXPECT_EQ(FlightRecorder::dumpAll("test"), 0);  // nothing registered
}

}  // namespace
}  // namespace chorus::core
