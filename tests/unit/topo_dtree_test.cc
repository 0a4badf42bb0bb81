// Exhaustive checks of the double binary tree index math for n = 1..64.
#include <gtest/gtest.h>

#include <vector>

#include "topology/dtree.h"

namespace chorus::topology {
namespace {

// Checks that tree t over n positions is a tree rooted at dtreeRoot with consistent parent/child links, and
// returns which positions are leaves.
std::vector<bool> checkTree(int n, int t) {
  std::vector<int> parentOf(n, -2);
  std::vector<int> nChildren(n, 0);
  int roots = 0;
  for (int p = 0; p < n; ++p) {
    TreeLinks l = dtreeLinks(n, p, t);
    EXPECT_GE(l.parent, -1);
    EXPECT_LT(l.parent, n);
    if (l.parent == -1) {
      ++roots;
      EXPECT_EQ(p, dtreeRoot(n, t)) << "n=" << n << " t=" << t;
    }
    parentOf[p] = l.parent;
    for (int c : l.child) {
      if (c < 0) continue;
      EXPECT_LT(c, n);
      EXPECT_EQ(dtreeLinks(n, c, t).parent, p) << "n=" << n << " t=" << t << " p=" << p << " c=" << c;
      ++nChildren[p];
    }
  }
  EXPECT_EQ(roots, 1) << "n=" << n << " t=" << t;
  // Every parent lists its child, and walking up always reaches the root (no cycles).
  for (int p = 0; p < n; ++p) {
    if (parentOf[p] >= 0) {
      TreeLinks up = dtreeLinks(n, parentOf[p], t);
      EXPECT_TRUE(up.child[0] == p || up.child[1] == p) << "n=" << n << " t=" << t << " p=" << p;
    }
    int steps = 0;
    for (int q = p; q != -1 && steps <= n; q = parentOf[q]) ++steps;
    EXPECT_LE(steps, n) << "cycle at n=" << n << " t=" << t << " p=" << p;
  }
  std::vector<bool> leaf(n);
  for (int p = 0; p < n; ++p) leaf[p] = nChildren[p] == 0;
  return leaf;
}

TEST(TopoDtree, TreesAreValidAndEveryPositionIsALeafOnce) {
  for (int n = 1; n <= 64; ++n) {
    std::vector<bool> leaf0 = checkTree(n, 0);
    std::vector<bool> leaf1 = checkTree(n, 1);
    if (n <= 2) continue;
    for (int p = 0; p < n; ++p) EXPECT_TRUE(leaf0[p] || leaf1[p]) << "n=" << n << " p=" << p;
    EXPECT_NE(dtreeRoot(n, 0), dtreeRoot(n, 1)) << "n=" << n;
  }
}

TEST(TopoDtree, BtreeDepthIsLogarithmic) {
  for (int n = 1; n <= 64; ++n) {
    for (int t = 0; t < 2; ++t) {
      int maxDepth = 0;
      for (int p = 0; p < n; ++p) {
        int depth = 0;
        for (int q = p; dtreeLinks(n, q, t).parent != -1; q = dtreeLinks(n, q, t).parent) ++depth;
        maxDepth = std::max(maxDepth, depth);
      }
      int log2n = 0;
      while ((1 << log2n) < n) ++log2n;
      EXPECT_LE(maxDepth, log2n + 1) << "n=" << n << " t=" << t;
    }
  }
}

}  // namespace
}  // namespace chorus::topology
