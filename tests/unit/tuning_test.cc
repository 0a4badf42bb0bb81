// The tuner's channel count and chunk size, and the FIFO geometry it reads: host ranks use one channel per
// 4 MiB handled, ranks on a GPU one per 512 KiB (a channel there is one CUDA block); chunks are half a FIFO.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "base/params.h"
#include "collectives/tuning.h"
#include "scoped_param.h"
#include "transport/cma.h"
#include "transport/fifo_geometry.h"

namespace chorus::coll {
namespace {

TuningContext hostContext(int maxChannels) {
  TuningContext t;
  t.nranks = 2;
  t.maxChannels = maxChannels;
  t.minChannels = 1;
  t.slotBytes = transport::fifoSlotBytes();
  t.algoSpec = "ring";
  return t;
}

CollOp allReduce(size_t bytes) {
  CollOp op;
  op.type = CollType::kAllReduce;
  op.dtype = reduce::DType::kFloat32;
  op.count = bytes / 4;
  return op;
}

// allReduce(bytes) as tune() completes it under `t`.
CollOp tunedAllReduce(size_t bytes, const TuningContext& t) {
  CollOp op = allReduce(bytes);
  tune(op, t);
  return op;
}

TEST(Tuning, HostRanksTakeOneChannelPer4MiBWithinThePreparedRings) {
  const TuningContext t = hostContext(16);
  for (auto [bytes, channels] :
       {std::pair<size_t, int>{4, 1}, {(4u << 20) - 4, 1}, {4u << 20, 2}, {32u << 20, 9}, {size_t(1) << 30, 16}}) {
    const CollOp op = tunedAllReduce(bytes, t);
    EXPECT_EQ(op.algo, Algo::kRing);
    EXPECT_EQ(op.nChannels, channels) << bytes << " bytes";
  }
}

TEST(Tuning, DeviceRanksTakeOneChannelPer512KiB) {
  TuningContext t = hostContext(16);
  t.bytesPerChannel = size_t(512) << 10;
  for (auto [bytes, channels] :
       {std::pair<size_t, int>{4, 1}, {512u << 10, 2}, {4u << 20, 9}, {8u << 20, 16}, {size_t(256) << 20, 16}}) {
    const CollOp op = tunedAllReduce(bytes, t);
    EXPECT_EQ(op.nChannels, channels) << bytes << " bytes";
  }
  // Never more than the rings prepared, never fewer than asked for.
  t.maxChannels = 4;
  const CollOp big = tunedAllReduce(size_t(256) << 20, t);
  EXPECT_EQ(big.nChannels, 4);
  t.minChannels = 3;
  const CollOp small = tunedAllReduce(4, t);
  EXPECT_EQ(small.nChannels, 3);
}

TEST(Tuning, ChunksAreHalfAFifo) {
  TuningContext t = hostContext(2);
  CollOp op = allReduce(64u << 20);
  tune(op, t);
  EXPECT_EQ(op.chunkBytes, t.slotBytes * (transport::kFifoSlots / 2));
}

// A chunk that CHORUS_CHUNKSIZE sets is taken as it is up to half a FIFO (the default), and held to that beyond.
TEST(Tuning, AForcedChunkIsAtMostHalfAFifo) {
  TuningContext t = hostContext(2);
  const size_t half = t.slotBytes * (transport::kFifoSlots / 2);
  for (size_t forced : {size_t{65536}, half, half + 1, half * 2, half * 8}) {
    t.forcedChunk = static_cast<int64_t>(forced);
    CollOp op = allReduce(64u << 20);
    tune(op, t);
    EXPECT_EQ(op.chunkBytes, std::min(forced, half)) << forced;
  }
}

// The model's own choice (no CHORUS_ALGO) for `type` over `bytes` at `nranks` ranks on one host.
Algo modelChoice(CollType type, size_t bytes, int nranks, bool treeByModel) {
  TuningContext t = hostContext(2);
  t.nranks = nranks;
  t.algoSpec.clear();
  t.treeByModel = treeByModel;
  CollOp op = allReduce(bytes);
  op.type = type;
  tune(op, t);
  return op.algo;
}

// Ranks that outnumber their cores (treeByModel false) get no tree from the model: a ring or, where it fits, a
// direct exchange. With a core each, the model picks trees where their depth wins: broadcasts and reduces of a few
// KiB, mid-size all-reduces at 8 ranks.
TEST(Tuning, OversubscribedRanksGetNoTreeFromTheModel) {
  bool treeSomewhere = false;
  for (CollType type : {CollType::kBroadcast, CollType::kReduce, CollType::kAllReduce}) {
    for (int nranks : {3, 4, 5, 8, 16}) {
      for (size_t bytes = 8; bytes <= (size_t{64} << 20); bytes *= 4) {
        EXPECT_NE(modelChoice(type, bytes, nranks, false), Algo::kTree)
            << collName(type) << " " << bytes << " bytes " << nranks << " ranks";
        treeSomewhere = treeSomewhere || modelChoice(type, bytes, nranks, true) == Algo::kTree;
      }
    }
  }
  EXPECT_TRUE(treeSomewhere);
  EXPECT_EQ(modelChoice(CollType::kReduce, 8192, 4, true), Algo::kTree);
  EXPECT_EQ(modelChoice(CollType::kReduce, 8192, 4, false), Algo::kRing);
  EXPECT_EQ(modelChoice(CollType::kBroadcast, 8192, 8, true), Algo::kTree);
  EXPECT_EQ(modelChoice(CollType::kBroadcast, 8192, 8, false), Algo::kRing);
}

// A small reduce goes to its root in one step (every rank posts its buffer there) wherever the ranks run: the
// direct reduce, as broadcast's direct step the other way.
TEST(Tuning, SmallReducesGoDirectToTheRoot) {
  for (bool treeByModel : {false, true}) {
    for (int nranks : {3, 4, 8, 16}) {
      EXPECT_EQ(modelChoice(CollType::kReduce, 8, nranks, treeByModel), Algo::kDirect) << nranks;
      // At 16 ranks the root's 15 messages of 2 KiB cost more than a tree's 4 levels, where trees are allowed.
      if (nranks < 16) {
        EXPECT_EQ(modelChoice(CollType::kReduce, 2048, nranks, treeByModel), Algo::kDirect) << nranks;
      }
    }
    // Past one FIFO slot's share (32 KiB) or 16 ranks, never.
    EXPECT_NE(modelChoice(CollType::kReduce, (32u << 10) + 4, 4, treeByModel), Algo::kDirect);
    EXPECT_NE(modelChoice(CollType::kReduce, 8, 17, treeByModel), Algo::kDirect);
  }
}

// CHORUS_ALGO=tree still runs trees there (the forced-algorithm tests rely on it).
TEST(Tuning, AForcedTreeHoldsWhenTheModelLeavesTreesOut) {
  TuningContext t = hostContext(2);
  t.nranks = 4;
  t.algoSpec = "tree";
  t.treeByModel = false;
  CollOp op = allReduce(4096);
  op.type = CollType::kReduce;
  tune(op, t);
  EXPECT_EQ(op.algo, Algo::kTree);
  EXPECT_EQ(op.nChannels, 1);
}

// A host rank runs its channels one after the other: a tree takes channels as a ring does, one per 4 MiB, so that a
// small operation walks one tree, not both in turn.
TEST(Tuning, AHostTreeTakesChannelsAsARingDoes) {
  TuningContext t = hostContext(16);
  t.nranks = 8;
  t.algoSpec = "tree";
  for (auto [bytes, channels] :
       {std::pair<size_t, int>{4, 1}, {32u << 10, 1}, {(4u << 20) - 4, 1}, {4u << 20, 2}, {32u << 20, 9}}) {
    const CollOp op = tunedAllReduce(bytes, t);
    EXPECT_EQ(op.algo, Algo::kTree);
    EXPECT_EQ(op.nChannels, channels) << bytes << " bytes";
  }
  // CHORUS_MIN_CTAS (or config->minCTAs) still asks for both trees.
  t.minChannels = 2;
  const CollOp small = tunedAllReduce(4, t);
  EXPECT_EQ(small.nChannels, 2);
}

// A GPU runs its channels side by side: a tree takes both trees of the double binary tree at every size, so that
// every rank is a leaf in one of them.
TEST(Tuning, ADeviceTreeTakesBothTreesAtEverySize) {
  TuningContext t = hostContext(16);
  t.nranks = 8;
  t.algoSpec = "tree";
  t.bytesPerChannel = size_t(512) << 10;
  t.parallelChannels = true;
  for (auto [bytes, channels] : {std::pair<size_t, int>{4, 2}, {32u << 10, 2}, {512u << 10, 2}, {1u << 20, 3}}) {
    const CollOp op = tunedAllReduce(bytes, t);
    EXPECT_EQ(op.algo, Algo::kTree);
    EXPECT_EQ(op.nChannels, channels) << bytes << " bytes";
  }
  t.maxChannels = 1;  // one ring prepared: one tree
  EXPECT_EQ(tunedAllReduce(4, t).nChannels, 1);
}

// CHORUS_BUFFSIZE is unset in the test environment: host FIFOs hold 1 MiB, device FIFOs NCCL's 4 MiB.
TEST(FifoGeometry, DeviceFifosAreFourTimesTheHostsByDefault) {
  ASSERT_EQ(std::getenv("CHORUS_BUFFSIZE"), nullptr);
  EXPECT_EQ(transport::fifoSlotBytes(), (size_t(1) << 20) / transport::kFifoSlots);
  EXPECT_EQ(transport::fifoSlotBytes(false), transport::fifoSlotBytes());
  EXPECT_EQ(transport::fifoSlotBytes(true), (size_t(4) << 20) / transport::kFifoSlots);
}

// By default a receiver that waits is read by reference from 64 KiB only where its CMA reads are fast; both ends
// pass the same connection fact, so they agree.
TEST(SingleCopyToReceiver, ByDefaultFrom64KiBWhereTheReceiverReadsFast) {
  ScopedParam unset("CHORUS_P2P_CMA_MIN_BYTES", nullptr);
  EXPECT_FALSE(useSingleCopyToReceiver((64u << 10) - 1, true));
  EXPECT_TRUE(useSingleCopyToReceiver(64u << 10, true));
  EXPECT_TRUE(useSingleCopyToReceiver(256u << 20, true));
  for (size_t bytes : {size_t{1}, size_t{64} << 10, size_t{256} << 20}) {
    EXPECT_FALSE(useSingleCopyToReceiver(bytes, false)) << bytes;
  }
}

// A value set by the user holds whatever the measurement says: tests force references on every machine with it.
TEST(SingleCopyToReceiver, AnExplicitThresholdOverridesTheMeasurement) {
  {
    ScopedParam four("CHORUS_P2P_CMA_MIN_BYTES", "4");
    for (bool fast : {false, true}) {
      EXPECT_FALSE(useSingleCopyToReceiver(3, fast));
      EXPECT_TRUE(useSingleCopyToReceiver(4, fast));
    }
  }
  {
    ScopedParam never("CHORUS_P2P_CMA_MIN_BYTES", "0");
    for (bool fast : {false, true}) EXPECT_FALSE(useSingleCopyToReceiver(size_t{1} << 30, fast));
  }
}

// The measurement is taken once per process and is a real ratio; cmaReadsFast() is its comparison with the limit.
TEST(SingleCopyToReceiver, TheCmaMeasurementIsKept) {
  const double slowdown = transport::cmaSlowdown();
  EXPECT_GT(slowdown, 0.0);
  EXPECT_EQ(transport::cmaSlowdown(), slowdown);
  EXPECT_EQ(transport::cmaReadsFast(), slowdown <= transport::kCmaFastSlowdown);
}

// Peers read chorusMemAlloc buffers through mappings for broadcast and all-gather out of place from 4 MiB; never in
// place, never for the reductions or the point-to-point collectives (which decide per transfer), never with 0.
// Streaming stores go by the bytes an operation touches, input and output, counted once where they overlap: an 8 MiB
// out-of-place all-to-all or send/recv streams its output, the same operation in place (whose lines the next call
// finds in the cache) does not; 16 MiB of output streams either way.
TEST(StreamsOutput, ByTheFootprintOfInputAndOutput) {
  constexpr size_t kMiB = size_t{1} << 20;
  EXPECT_EQ(footprintBytes(8 * kMiB, 8 * kMiB, false), 16 * kMiB);
  EXPECT_EQ(footprintBytes(8 * kMiB, 8 * kMiB, true), 8 * kMiB);
  EXPECT_EQ(footprintBytes(4 * kMiB, 16 * kMiB, true),
            16 * kMiB);  // an in-place all-gather: the output holds the input
  EXPECT_TRUE(streamsOutput(footprintBytes(8 * kMiB, 8 * kMiB, false), 16 * kMiB));
  EXPECT_FALSE(streamsOutput(footprintBytes(8 * kMiB, 8 * kMiB, true), 16 * kMiB));
  EXPECT_FALSE(streamsOutput(footprintBytes(4 * kMiB, 8 * kMiB, false), 16 * kMiB));  // a 2-rank all-gather of 8 MiB
  EXPECT_TRUE(streamsOutput(footprintBytes(16 * kMiB, 16 * kMiB, true), 16 * kMiB));
  EXPECT_FALSE(streamsOutput(footprintBytes(0, 16 * kMiB - 1, false), 16 * kMiB));
}

TEST(MappedRefs, BroadcastAndAllGatherOutOfPlaceFrom4MiB) {
  ScopedParam unset("CHORUS_MAPPED_MIN_BYTES", nullptr);
  const size_t from = size_t{4} << 20;
  for (CollType type : {CollType::kBroadcast, CollType::kAllGather}) {
    EXPECT_FALSE(useMappedRefs(type, from - 1, false));
    EXPECT_TRUE(useMappedRefs(type, from, false));
    EXPECT_TRUE(useMappedRefs(type, size_t{1} << 30, false));
    EXPECT_FALSE(useMappedRefs(type, size_t{1} << 30, true));
  }
  for (CollType type :
       {CollType::kAllReduce, CollType::kReduceScatter, CollType::kReduce, CollType::kSend, CollType::kRecv}) {
    EXPECT_FALSE(useMappedRefs(type, size_t{1} << 30, false)) << collName(type);
  }
}

TEST(MappedRefs, TheThresholdIsAParameter) {
  {
    ScopedParam four("CHORUS_MAPPED_MIN_BYTES", "4");
    EXPECT_FALSE(useMappedRefs(CollType::kAllGather, 3, false));
    EXPECT_TRUE(useMappedRefs(CollType::kAllGather, 4, false));
  }
  ScopedParam never("CHORUS_MAPPED_MIN_BYTES", "0");
  EXPECT_FALSE(useMappedRefs(CollType::kBroadcast, size_t{1} << 30, false));
}

}  // namespace
}  // namespace chorus::coll
