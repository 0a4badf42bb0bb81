// Lane helpers shared by every ISA build of the kernels. No include guard: like Highway's -inl.h files this
// is included inside each ISA's namespace (kernels_impl.h) after `#pragma GCC target`, so every template
// here is compiled for that ISA and no out-of-line copy can leak into another ISA's code through the linker.
//
// Vec<T, N> is N lanes of T as a GCC vector, and Vec<T, 1> is the plain scalar T. The operators, `?:`, the
// shifts and the comparisons used by the kernels mean the same on both, so the scalar reference, the tails of
// the vector loops and the vector bodies are one source, and SSE2, AVX2 and AVX-512 agree with scalar by
// construction rather than by testing alone.
//
// Needs <type_traits> and <utility> included before the enclosing namespace.

template <typename T, int N>
struct VecOf {
  typedef T type __attribute__((vector_size(N * sizeof(T))));
};
template <typename T>
struct VecOf<T, 1> {
  using type = T;
};
template <typename T, int N>
using Vec = typename VecOf<T, N>::type;

template <typename V>
inline constexpr bool kIsVector = !std::is_arithmetic_v<V>;

template <typename V, bool = kIsVector<V>>
struct LaneOf {
  using type = V;
};
template <typename V>
struct LaneOf<V, true> {
  using type = std::remove_cvref_t<decltype(std::declval<V&>()[0])>;
};
template <typename V>
using Lane = typename LaneOf<V>::type;

// Every lane set to x.
template <typename V, typename L>
CHORUS_LANE_INLINE V splat(L x) {
  if constexpr (kIsVector<V>) {
    // Not V{} + x, which turns -0.0 into +0.0; GCC folds this loop into one broadcast.
    V v;
    for (size_t i = 0; i < sizeof(V) / sizeof(Lane<V>); ++i) v[i] = static_cast<Lane<V>>(x);
    return v;
  } else {
    return static_cast<V>(x);
  }
}

// m ? a : b lane by lane; m is the result of a comparison of lanes as wide as those of a and b.
template <typename M, typename V>
CHORUS_LANE_INLINE V select(M m, V a, V b) {
  return m ? a : b;
}

template <typename To, typename From>
CHORUS_LANE_INLINE To bitCast(From v) {
  return __builtin_bit_cast(To, v);
}

// Lane-wise value conversion (widening or truncating integers).
template <typename To, typename From>
CHORUS_LANE_INLINE To convertLanes(From v) {
  if constexpr (kIsVector<From>) {
    return __builtin_convertvector(v, To);
  } else {
    return static_cast<To>(v);
  }
}

// Unaligned loads and stores through memcpy: any alignment, no aliasing assumptions, one instruction.
template <typename V, typename S>
CHORUS_LANE_INLINE V loadLanes(const S* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof(V));
  return v;
}
template <typename V, typename S>
CHORUS_LANE_INLINE void storeLanes(S* p, V v) {
  __builtin_memcpy(p, &v, sizeof(V));
}
