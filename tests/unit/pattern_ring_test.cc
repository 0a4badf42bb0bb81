// Exhaustive tests of the ring index math (pattern/ring.h) and of the chunk grid every algorithm walks
// (pattern/chunk_grid.h): all rank counts 1..16, many counts (0, 1, primes, non-divisible), chunk sizes,
// grains and channel counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <random>
#include <vector>

#include "collectives/pattern/chunk_grid.h"
#include "collectives/pattern/index_math.h"
#include "collectives/pattern/ring.h"

namespace chorus::coll {
namespace {

TEST(PatternIndexMath, DivUpRoundUpMinMax) {
  for (size_t b = 1; b <= 70; ++b) {
    for (size_t a = 0; a <= 300; ++a) {
      EXPECT_EQ(divUp(a, b), (a + b - 1) / b);
      EXPECT_EQ(roundUp(a, b) % b, 0u);
      EXPECT_GE(roundUp(a, b), a);
      EXPECT_LT(roundUp(a, b) - a, b);
    }
  }
  EXPECT_EQ(minOf<size_t>(3, 5), 3u);
  EXPECT_EQ(maxOf(-3, 5), 5);
}

TEST(PatternRing, ModRanksAndPositions) {
  std::mt19937 rng(1234);
  for (int n = 1; n <= 16; ++n) {
    for (int r = 0; r < 2 * n; ++r) EXPECT_EQ(modRanks(r, n), r % n);
    for (int variant = 0; variant < 4; ++variant) {
      std::vector<int> ring(n);
      std::iota(ring.begin(), ring.end(), 0);
      if (variant == 1) std::reverse(ring.begin(), ring.end());
      if (variant >= 2) std::shuffle(ring.begin(), ring.end(), rng);
      for (int pos = 0; pos < n; ++pos) {
        EXPECT_EQ(ringPositionOf(ring.data(), n, ring[pos]), pos);
        EXPECT_EQ(ringNextRank(ring.data(), pos, n), ring[(pos + 1) % n]);
        EXPECT_EQ(ringPrevRank(ring.data(), pos, n), ring[(pos + n - 1) % n]);
        std::vector<int> seen(n, 0);
        for (int k = 0; k < n; ++k) {
          EXPECT_EQ(ringPosAfter(pos, k, n), (pos + k) % n);
          EXPECT_EQ(ringRankAfter(ring.data(), pos, k, n), ring[(pos + k) % n]);
          ++seen[ringRankAfter(ring.data(), pos, k, n)];
          EXPECT_EQ(ringDistance(pos, ringPosAfter(pos, k, n), n), k);
        }
        for (int c : seen) EXPECT_EQ(c, 1);  // the k-ahead ranks from any position are a permutation
      }
      EXPECT_EQ(ringPositionOf(ring.data(), n, n), -1);
    }
  }
}

// The ring all-reduce's block schedule: the block a position sends first is the one its successor reduces
// next, and so on around the ring; each block is completed (step nranks - 1) at its owner and received last
// (step 2 * nranks - 2) by the rank just before its owner.
TEST(PatternRing, AllReduceBlocksFollowTheRing) {
  for (int n = 2; n <= 16; ++n) {
    std::vector<int> ring(n);
    std::iota(ring.begin(), ring.end(), 0);
    std::mt19937 rng(static_cast<unsigned>(n));
    std::shuffle(ring.begin(), ring.end(), rng);
    // The block handled at call s (0 .. 2n-2) by position pos, as runRingAllReduce picks them: the rank
    // n-1-s ahead during the reduce-scatter (s <= n-1), then 2n-1-s ahead during the all-gather.
    auto block = [&](int pos, int s) {
      const int k = s <= n - 1 ? n - 1 - s : 2 * n - 1 - s;
      return ringRankAfter(ring.data(), pos, k, n);
    };
    for (int pos = 0; pos < n; ++pos) {
      // What call s sends, the next position receives with call s + 1.
      for (int s = 0; s <= 2 * n - 3; ++s) {
        EXPECT_EQ(block(pos, s), block((pos + 1) % n, s + 1)) << n << " " << pos << " " << s;
      }
      EXPECT_EQ(block(pos, n - 1), ring[pos]);  // completed at its owner
    }
  }
}

struct GridStats {
  size_t loops = 0;
  size_t nonEmptyChunks = 0;
};

// Walks the grid as the algorithms do, over every channel and block, checking each chunk and marking
// coverage; returns false on the first failure (the gtest failure says where).
bool walkGrid(const ChunkGrid& g, std::vector<int>& cover, GridStats& stats) {
  for (size_t gridOffset = 0; gridOffset < g.count; gridOffset += g.loopElems()) {
    ++stats.loops;
    const size_t real = g.realChunk(gridOffset);
    EXPECT_GE(real, 1u);
    EXPECT_LE(real, g.chunkElems);
    if (g.chunkElems % g.grain == 0) {
      EXPECT_EQ(real % g.grain, 0u) << "real chunk off grain";
    }
    // One loop covers what remains or a full loop.
    const size_t covered = real * static_cast<size_t>(g.nChannels) * static_cast<size_t>(g.nBlocks);
    EXPECT_GE(covered, std::min(g.count - gridOffset, g.loopElems()));
    EXPECT_LE(covered, g.loopElems());
    for (int c = 0; c < g.nChannels; ++c) {
      for (int b = 0; b < g.nBlocks; ++b) {
        const size_t off = g.offset(gridOffset, real, c, b);
        const size_t n = g.elems(off, real);
        EXPECT_LE(n, real);
        if (n == 0) {
          EXPECT_GE(off, g.count);
          continue;
        }
        ++stats.nonEmptyChunks;
        if (g.chunkElems % g.grain == 0) {
          EXPECT_EQ((off - gridOffset) % g.grain, 0u);
        }
        if (off + n > g.count) {
          ADD_FAILURE() << "chunk past the end";
          return false;
        }
        for (size_t i = off; i < off + n; ++i) ++cover[i];
      }
    }
    if (::testing::Test::HasFailure()) return false;
  }
  return true;
}

TEST(PatternChunkGrid, EveryElementExactlyOnce) {
  const std::vector<size_t> counts = {0,   1,   2,   3,   7,    13,   16,   31,   64,   97,
                                      100, 255, 256, 257, 1000, 1021, 4096, 4099, 65537};
  const std::vector<size_t> chunks = {1, 2, 3, 7, 16, 64, 100, 1024, 1 << 20};
  const std::vector<size_t> grains = {1, 4, 16, 64};
  for (int nBlocks = 1; nBlocks <= 16; ++nBlocks) {
    for (int nChannels = 1; nChannels <= 4; ++nChannels) {
      for (size_t count : counts) {
        for (size_t chunk : chunks) {
          for (size_t grain : grains) {
            // The big count with a one-element chunk is slow and adds nothing over the smaller ones.
            if (count > 5000 && chunk < 64) continue;
            const ChunkGrid g = makeChunkGrid(count, chunk, grain, nChannels, nBlocks);
            std::vector<int> cover(count, 0);
            GridStats stats;
            ASSERT_TRUE(walkGrid(g, cover, stats)) << "count " << count << " chunk " << chunk << " grain " << grain
                                                   << " nChannels " << nChannels << " nBlocks " << nBlocks;
            for (size_t i = 0; i < count; ++i) {
              ASSERT_EQ(cover[i], 1) << "element " << i << " count " << count << " chunk " << chunk << " grain "
                                     << grain << " nChannels " << nChannels << " nBlocks " << nBlocks;
            }
            EXPECT_EQ(stats.loops, count == 0 ? 0 : divUp(count, g.loopElems()));
          }
        }
      }
    }
  }
}

// When the count is small, the last loop spreads it over channels and blocks instead of giving everything
// to the first chunk: every channel gets work when there is at least a grain per chunk.
TEST(PatternChunkGrid, SmallCountsAreSpread) {
  const ChunkGrid g = makeChunkGrid(4 * 3 * 16, 1024, 16, 3, 4);
  EXPECT_EQ(g.realChunk(0), 16u);
  for (int c = 0; c < 3; ++c) {
    for (int b = 0; b < 4; ++b) EXPECT_EQ(g.elems(g.offset(0, 16, c, b), 16), 16u);
  }
  // A grain larger than the chunk never makes a chunk exceed chunkElems (the FIFO slot).
  const ChunkGrid odd = makeChunkGrid(1000, 10, 16, 2, 3);
  EXPECT_EQ(odd.realChunk(0), 10u);
  EXPECT_EQ(odd.realChunk(960), 10u);
  // Zero chunk or grain sizes are read as 1 rather than looping forever.
  const ChunkGrid zero = makeChunkGrid(5, 0, 0, 0, 0);
  EXPECT_EQ(zero.loopElems(), 1u);
  EXPECT_EQ(zero.realChunk(0), 1u);
}

}  // namespace
}  // namespace chorus::coll
