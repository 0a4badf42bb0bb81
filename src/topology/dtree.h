// Index math of the double binary tree (NCCL's btree and dtree, trees.cc), header-only so that it can be tested
// exhaustively on its own. Ranks are positions 0..n-1 in some order chosen by the caller (for instance hosts in
// ring order); the trees only say who is whose parent.
//
// Tree 0 is the binary tree over positions in which a node's parent clears its lowest set bit and sets the next
// one (the root 0 has one child). Its leaves are exactly the odd positions. Tree 1 is built so that the even
// positions are its leaves: for even n it is tree 0 mirrored (p -> n-1-p); for odd n it is the binary tree over
// the n-1 positions 1..n-1 (position p plays p-1) with position 0 hung as a leaf under that tree's root, which has
// a free child slot. NCCL shifts instead for odd n, which leaves position 0 inner in both trees; this variant makes
// every position a leaf in at least one of the two trees for every n > 2.
#pragma once

namespace chorus::topology {

struct TreeLinks {
  int parent = -1;
  int child[2] = {-1, -1};
};

// Binary tree over positions 0..n-1, root 0.
inline TreeLinks btreeLinks(int n, int p) {
  TreeLinks t;
  if (n <= 1) return t;
  int bit = 1;
  while (bit < n && (bit & p) == 0) bit <<= 1;
  if (p == 0) {
    t.child[1] = bit >> 1;  // bit is the first power of two >= n here
    return t;
  }
  int up = (p ^ bit) | (bit << 1);
  if (up >= n) up = p ^ bit;
  t.parent = up;
  int low = bit >> 1;
  if (low == 0) return t;
  t.child[0] = p - low;
  while (low > 0 && p + low >= n) low >>= 1;
  t.child[1] = low > 0 ? p + low : -1;
  return t;
}

// Root of tree `tree` (0 or 1) of the double binary tree over n positions.
inline int dtreeRoot(int n, int tree) {
  if (n <= 1 || tree == 0) return 0;
  return n % 2 == 0 ? n - 1 : 1;
}

// Links of position p in tree `tree` (0 or 1) of the double binary tree over n positions.
inline TreeLinks dtreeLinks(int n, int p, int tree) {
  if (tree == 0 || n <= 1) return btreeLinks(n, p);
  auto map = [](int v, int f(int, int), int arg) { return v < 0 ? -1 : f(v, arg); };
  TreeLinks t;
  if (n % 2 == 0) {
    auto mirror = [](int v, int m) { return m - 1 - v; };
    TreeLinks b = btreeLinks(n, n - 1 - p);
    t.parent = map(b.parent, mirror, n);
    t.child[0] = map(b.child[0], mirror, n);
    t.child[1] = map(b.child[1], mirror, n);
    return t;
  }
  auto shift = [](int v, int) { return v + 1; };
  if (p == 0) {
    t.parent = 1;
    return t;
  }
  TreeLinks b = btreeLinks(n - 1, p - 1);
  t.parent = map(b.parent, shift, 0);
  t.child[0] = map(b.child[0], shift, 0);
  t.child[1] = map(b.child[1], shift, 0);
  if (p == 1) t.child[0] = 0;  // the root of the inner tree has no child[0]: position 0 hangs there
  return t;
}

}  // namespace chorus::topology
