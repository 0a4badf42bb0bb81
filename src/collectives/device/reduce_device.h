// Element-wise reduction for the CUDA executor, written once for the device and the host (CHORUS_HOST_DEVICE):
// the kernels call it with their thread index and count, and the host tests call it with (0, 1) and compare
// every type and op bit for bit with the host kernels (reduce/reduce.h).
//
// Semantics are the host kernels' (reduce/kernels_impl.h): float16, bfloat16 and fp8 widen exactly to float32
// and round to nearest even after every step, with the conversions of reduce/convert_inl.h (literally the same
// source, included below); max/min follow fmaxf/fminf with remote winning ties; sum/prod keep local's NaN;
// integers wrap; avg premultiplies floating inputs by 1/n and post-divides integers (truncating).
//
// The op is a run-time switch (one kernel per type, not per type and op: compile time), the element type a
// template parameter. Bulk data moves in 16-byte packs when every pointer is 16-byte aligned, in elements
// otherwise and for the tail.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "base/host_device.h"
#include "collectives/reduce/dtype_traits.h"
#include "collectives/reduce/reduce.h"

namespace chorus::coll::device {

namespace conv {
// The scalar lane helpers convert_inl.h is written over.
template <typename To, typename From>
CHORUS_HOST_DEVICE To bitCast(From f) {
  static_assert(sizeof(To) == sizeof(From), "bitCast sizes");
  To t;
  memcpy(&t, &f, sizeof(To));
  return t;
}
template <typename T>
CHORUS_HOST_DEVICE T splat(T v) {
  return v;
}
template <typename T>
CHORUS_HOST_DEVICE T select(bool c, T a, T b) {
  return c ? a : b;
}
#pragma push_macro("CHORUS_LANE_INLINE")
#undef CHORUS_LANE_INLINE
#define CHORUS_LANE_INLINE CHORUS_HOST_DEVICE
#include "collectives/reduce/convert_inl.h"
#pragma pop_macro("CHORUS_LANE_INLINE")
}  // namespace conv

// Run-time reduction parameters of one launch (ReduceParams plus the op).
struct DevReduceParams {
  int op = 0;           // reduce::Op value
  double premul = 1.0;  // floating avg: 1/nranks, applied to local input as it enters
  int64_t postDiv = 1;  // integer avg: nranks, applied where postOp is set
};

// S: storage type; C: compute type (reduce/dtype_traits.h, the host kernels' table).
template <reduce::DType kT>
using DevType = reduce::DTypeTraits<kT>;

template <reduce::DType kT>
constexpr bool kDevFloating = reduce::kFloatingDType<kT>;

template <reduce::DType kT>
CHORUS_HOST_DEVICE typename DevType<kT>::C widen(typename DevType<kT>::S s) {
  if constexpr (kT == reduce::DType::kFloat16)
    return conv::halfToFloatLanes<uint32_t, float>(s);
  else if constexpr (kT == reduce::DType::kBfloat16)
    return conv::bf16ToFloatLanes<uint32_t, float>(s);
  else if constexpr (kT == reduce::DType::kFloat8e4m3)
    return conv::e4m3ToFloatLanes<uint32_t, float>(s);
  else if constexpr (kT == reduce::DType::kFloat8e5m2)
    return conv::e5m2ToFloatLanes<uint32_t, float>(s);
  else
    return s;
}

template <reduce::DType kT>
CHORUS_HOST_DEVICE typename DevType<kT>::S narrow(typename DevType<kT>::C c) {
  using S = typename DevType<kT>::S;
  if constexpr (kT == reduce::DType::kFloat16)
    return static_cast<S>(conv::floatToHalfLanes<uint32_t, float>(c));
  else if constexpr (kT == reduce::DType::kBfloat16)
    return static_cast<S>(conv::floatToBf16Lanes<uint32_t, float>(c));
  else if constexpr (kT == reduce::DType::kFloat8e4m3)
    return static_cast<S>(conv::floatToE4m3Lanes<uint32_t, float>(c));
  else if constexpr (kT == reduce::DType::kFloat8e5m2)
    return static_cast<S>(conv::floatToE5m2Lanes<uint32_t, float>(c));
  else
    return c;
}

// The NaN test, x != x, spelled in one place.
template <typename C>
CHORUS_HOST_DEVICE bool isNan(C x) {
  return x != x;  // NOLINT(misc-redundant-expression): true exactly for NaN
}

// op(a, b) in the compute type, with the host kernels' NaN and wrap-around rules. a is local (or the running
// partial result), b the remote value.
template <typename C>
CHORUS_HOST_DEVICE C applyOp(int op, C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    switch (op) {
      case 1: return isNan(a) ? a + a : a * b;        // prod
      case 2: return isNan(b) ? a : (a > b ? a : b);  // max
      case 3: return isNan(b) ? a : (a < b ? a : b);  // min
      default: return isNan(a) ? a + a : a + b;       // sum, avg
    }
  } else {
    // Wrapping arithmetic in an unsigned type at least as wide as int (no signed overflow, no promotion).
    using UC = std::conditional_t<(sizeof(C) > sizeof(unsigned)), unsigned long long, unsigned>;
    switch (op) {
      case 1: return static_cast<C>(static_cast<UC>(a) * static_cast<UC>(b));
      case 2: return a > b ? a : b;
      case 3: return a < b ? a : b;
      default: return static_cast<C>(static_cast<UC>(a) + static_cast<UC>(b));
    }
  }
}

template <typename C>
CHORUS_HOST_DEVICE C divTrunc(C x, int64_t d) {
  if constexpr (static_cast<C>(-1) < static_cast<C>(0)) {
    return static_cast<C>(static_cast<int64_t>(x) / d);
  } else {
    return static_cast<C>(static_cast<uint64_t>(x) / static_cast<uint64_t>(d));
  }
}

// The largest number of sources and destinations of one reduce-copy: local input plus every receive peer,
// the output plus every send peer.
constexpr int kMaxReduceSrcs = 5;
constexpr int kMaxReduceDsts = 5;
// 16-byte packs each thread has in flight per round of a reduce-copy.
constexpr int kDevUnroll = 4;

// One bulk step of a Primitives call: dst[k][i] = post(reduce(pre(src[0][i]), src[1][i], ...)) for every
// destination k. `premulFirst` applies the premultiplier to src[0] (local input); `postOp` the post-divisor
// (integer avg) to the result. Sources may alias destinations only element for element.
struct ReduceCopyArgs {
  const void* srcs[kMaxReduceSrcs] = {};
  int nsrcs = 0;
  void* dsts[kMaxReduceDsts] = {};
  int ndsts = 0;
  bool premulFirst = false;
  bool postOp = false;
};

// The three steps of one element of a reduce-copy, shared by the vector and the element paths: the first
// source (premultiplied for a floating avg), each further source combined in order, and the integer avg's
// post-divisor on the result.
template <reduce::DType kT>
CHORUS_HOST_DEVICE typename DevType<kT>::S firstElement(const ReduceCopyArgs& a, const DevReduceParams& p,
                                                        typename DevType<kT>::S v) {
  using C = typename DevType<kT>::C;
  if constexpr (kDevFloating<kT>) {
    if (a.premulFirst && p.premul != 1.0) v = narrow<kT>(widen<kT>(v) * static_cast<C>(p.premul));
  }
  return v;
}

template <reduce::DType kT>
CHORUS_HOST_DEVICE typename DevType<kT>::S combineElement(const DevReduceParams& p, typename DevType<kT>::S acc,
                                                          typename DevType<kT>::S v) {
  using C = typename DevType<kT>::C;
  return narrow<kT>(applyOp<C>(p.op, widen<kT>(acc), widen<kT>(v)));
}

template <reduce::DType kT>
CHORUS_HOST_DEVICE typename DevType<kT>::S lastElement(const ReduceCopyArgs& a, const DevReduceParams& p,
                                                       typename DevType<kT>::S v) {
  using C = typename DevType<kT>::C;
  if constexpr (!kDevFloating<kT>) {
    if (a.postOp && p.postDiv != 1) v = divTrunc<C>(v, p.postDiv);
  }
  return v;
}

template <reduce::DType kT>
CHORUS_HOST_DEVICE typename DevType<kT>::S reduceElement(const ReduceCopyArgs& a, const DevReduceParams& p, size_t i) {
  using S = typename DevType<kT>::S;
  S v = firstElement<kT>(a, p, static_cast<const S*>(a.srcs[0])[i]);
  for (int j = 1; j < a.nsrcs; ++j) v = combineElement<kT>(p, v, static_cast<const S*>(a.srcs[j])[i]);
  return lastElement<kT>(a, p, v);
}

// 16 bytes of elements, loaded and stored as one vector on the device.
template <typename S>
union DevPack {
  static constexpr int kN = 16 / static_cast<int>(sizeof(S));
  uint64_t words[2];
  S e[kN];
};

template <typename S>
CHORUS_HOST_DEVICE DevPack<S> loadPack(const void* p) {
  DevPack<S> r;
#if defined(__CUDA_ARCH__)
  const uint4 v = *static_cast<const uint4*>(p);
  memcpy(&r, &v, 16);
#else
  memcpy(&r, p, 16);
#endif
  return r;
}

template <typename S>
CHORUS_HOST_DEVICE void storePack(void* p, const DevPack<S>& v) {
#if defined(__CUDA_ARCH__)
  uint4 t;
  memcpy(&t, &v, 16);
  *static_cast<uint4*>(p) = t;
#else
  memcpy(p, &v, 16);
#endif
}

// Runs elements [0, n) of `a`, this thread taking every nthreads-th pack (then element) from tid.
template <reduce::DType kT>
CHORUS_HOST_DEVICE void reduceCopy(const ReduceCopyArgs& a, const DevReduceParams& p, size_t n, int tid, int nthreads) {
  using S = typename DevType<kT>::S;
  constexpr int kN = DevPack<S>::kN;
  uintptr_t align = 0;
  for (int j = 0; j < a.nsrcs; ++j) align |= reinterpret_cast<uintptr_t>(a.srcs[j]);
  for (int k = 0; k < a.ndsts; ++k) align |= reinterpret_cast<uintptr_t>(a.dsts[k]);
  size_t done = 0;
  const bool copyOnly = a.nsrcs == 1 && !(a.premulFirst && kDevFloating<kT> && p.premul != 1.0) &&
                        !(a.postOp && !kDevFloating<kT> && p.postDiv != 1);
  if ((align & 15) == 0) {
    const size_t npacks = n / kN;
    const size_t stride = static_cast<size_t>(nthreads);
    size_t q = static_cast<size_t>(tid);
    // kDevUnroll packs per thread per round, every load of a round issued before the first use: one pack at a
    // time left a block with 4 KiB in flight, far from what hides the memory's latency.
    for (; q + (kDevUnroll - 1) * stride < npacks; q += kDevUnroll * stride) {
      DevPack<S> acc[kDevUnroll];
      for (int u = 0; u < kDevUnroll; ++u)
        acc[u] = loadPack<S>(static_cast<const S*>(a.srcs[0]) + (q + u * stride) * kN);
      if (!copyOnly) {
        for (int u = 0; u < kDevUnroll; ++u) {
          for (int e = 0; e < kN; ++e) acc[u].e[e] = firstElement<kT>(a, p, acc[u].e[e]);
        }
        for (int j = 1; j < a.nsrcs; ++j) {
          DevPack<S> in[kDevUnroll];
          for (int u = 0; u < kDevUnroll; ++u)
            in[u] = loadPack<S>(static_cast<const S*>(a.srcs[j]) + (q + u * stride) * kN);
          for (int u = 0; u < kDevUnroll; ++u) {
            for (int e = 0; e < kN; ++e) acc[u].e[e] = combineElement<kT>(p, acc[u].e[e], in[u].e[e]);
          }
        }
        for (int u = 0; u < kDevUnroll; ++u) {
          for (int e = 0; e < kN; ++e) acc[u].e[e] = lastElement<kT>(a, p, acc[u].e[e]);
        }
      }
      for (int k = 0; k < a.ndsts; ++k) {
        for (int u = 0; u < kDevUnroll; ++u) storePack<S>(static_cast<S*>(a.dsts[k]) + (q + u * stride) * kN, acc[u]);
      }
    }
    for (; q < npacks; q += stride) {
      DevPack<S> acc = loadPack<S>(static_cast<const S*>(a.srcs[0]) + q * kN);
      if (!copyOnly) {
        for (int e = 0; e < kN; ++e) acc.e[e] = firstElement<kT>(a, p, acc.e[e]);
        for (int j = 1; j < a.nsrcs; ++j) {
          const DevPack<S> in = loadPack<S>(static_cast<const S*>(a.srcs[j]) + q * kN);
          for (int e = 0; e < kN; ++e) acc.e[e] = combineElement<kT>(p, acc.e[e], in.e[e]);
        }
        for (int e = 0; e < kN; ++e) acc.e[e] = lastElement<kT>(a, p, acc.e[e]);
      }
      for (int k = 0; k < a.ndsts; ++k) storePack<S>(static_cast<S*>(a.dsts[k]) + q * kN, acc);
    }
    done = npacks * kN;
  }
  for (size_t i = done + static_cast<size_t>(tid); i < n; i += static_cast<size_t>(nthreads)) {
    const S v = reduceElement<kT>(a, p, i);
    for (int k = 0; k < a.ndsts; ++k) static_cast<S*>(a.dsts[k])[i] = v;
  }
}

}  // namespace chorus::coll::device
