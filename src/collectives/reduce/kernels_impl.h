// The reduction kernels, written once. No include guard: each kernels_<isa>.cc includes kernels_prelude.h,
// sets `#pragma GCC target`, defines
//   CHORUS_KERNEL_NS         the namespace of this build (scalar, sse2, avx2, avx512, avx512bf16)
//   CHORUS_KERNEL_VEC_BYTES  the vector width in bytes (0: one lane, the scalar reference)
//   CHORUS_KERNEL_F16C       1 to convert float16 with F16C / AVX-512 instructions
//   CHORUS_KERNEL_AVX512     1 for 512-bit vectors and intrinsics
//   CHORUS_KERNEL_BF16       1 to round bfloat16 with vcvtneps2bf16 (and define only the bfloat16 row)
// and includes this file, which defines the kernels and the table (or row) for dispatch.cc.
//
// Semantics (every ISA is bit-identical to scalar):
//  - float32/float64 compute in their own type; float16, bfloat16 and fp8 are widened to float32 exactly,
//    computed, and rounded to nearest even back to their type after every step (premul, then the op).
//  - max/min on floating types follow fmaxf/fminf (IEEE 754-2008 maxNum/minNum): a NaN operand is ignored
//    unless both are NaN (then local's NaN); equal values, +0 and -0 included, give remote. Written as
//    max(a, b) = isnan(b) ? a : (a > b ? a : b), two compares and two blends on every ISA, so the result never
//    depends on how an instruction set orders signed zeros or picks among NaNs. NCCL's device code uses
//    fmaxf/fminf for float as well.
//  - sum and prod with a NaN in local give local's NaN, quieted (x86 would give whichever operand the compiler
//    happened to put first); with a NaN in remote only, remote's.
//  - integers wrap; avg's postDiv truncates toward zero (C++ division), precondition postDiv >= 1.
//  - dst may be exactly local or remote (each vector is loaded before it is stored); partial overlap is not
//    supported.
#ifndef CHORUS_KERNEL_NS
#error "define CHORUS_KERNEL_NS and the other CHORUS_KERNEL_* macros before including kernels_impl.h"
#endif

namespace chorus::reduce::CHORUS_KERNEL_NS {

#include "collectives/reduce/lanes_inl.h"
// clang-format off: the two inl files must stay in this order (convert uses the lane helpers)
#include "collectives/reduce/convert_inl.h"
// clang-format on

// S: how a value is stored; C: the type it is computed in (dtype_traits.h, shared with the device).
template <DType kT>
using S = typename DTypeTraits<kT>::S;
template <DType kT>
using C = typename DTypeTraits<kT>::C;
template <DType kT>
inline constexpr bool kNarrow = !std::is_same_v<S<kT>, C<kT>>;
template <DType kT>
inline constexpr bool kFloating = kFloatingDType<kT>;
// Lanes per vector: as many as the compute type fits (narrow types: one float32 vector's worth).
template <DType kT>
inline constexpr int kLanes = CHORUS_KERNEL_VEC_BYTES == 0 ? 1 : CHORUS_KERNEL_VEC_BYTES / sizeof(C<kT>);

// ---- loads and stores, widening and narrowing -------------------------------------------------------------

// N narrow values (1 or 2 bytes) zero-extended to uint32 lanes, and back (the values are known to fit).
// GCC 12 lowers __builtin_convertvector between these widths lane by lane through general registers, so each
// vector width gets its zero-extend / pack instructions; the generic conversion is the scalar case.
// (maskz forms with a full mask: the plain AVX-512 intrinsics trip GCC 12's -Wmaybe-uninitialized.)
template <int N, typename Narrow>
CHORUS_LANE_INLINE Vec<uint32_t, N> loadWiden(const Narrow* p) {
  using U = Vec<uint32_t, N>;
  [[maybe_unused]] const void* v = p;
#if CHORUS_KERNEL_VEC_BYTES == 64
  if constexpr (N == 16 && sizeof(Narrow) == 1)
    return bitCast<U>(_mm512_maskz_cvtepu8_epi32(0xffff, _mm_loadu_si128(static_cast<const __m128i*>(v))));
  if constexpr (N == 16 && sizeof(Narrow) == 2) {
    return bitCast<U>(_mm512_maskz_cvtepu16_epi32(0xffff, _mm256_loadu_si256(static_cast<const __m256i*>(v))));
  }
#elif CHORUS_KERNEL_VEC_BYTES == 32
  if constexpr (N == 8 && sizeof(Narrow) == 1)
    return bitCast<U>(_mm256_cvtepu8_epi32(_mm_loadl_epi64(static_cast<const __m128i*>(v))));
  if constexpr (N == 8 && sizeof(Narrow) == 2)
    return bitCast<U>(_mm256_cvtepu16_epi32(_mm_loadu_si128(static_cast<const __m128i*>(v))));
#elif CHORUS_KERNEL_VEC_BYTES == 16
  if constexpr (N == 4 && sizeof(Narrow) == 1) {
    int32_t word;
    std::memcpy(&word, p, 4);
    const __m128i zero = _mm_setzero_si128();
    return bitCast<U>(_mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(word), zero), zero));
  }
  if constexpr (N == 4 && sizeof(Narrow) == 2) {
    return bitCast<U>(_mm_unpacklo_epi16(_mm_loadl_epi64(static_cast<const __m128i*>(v)), _mm_setzero_si128()));
  }
#endif
  return convertLanes<U>(loadLanes<Vec<Narrow, N>>(p));
}

template <int N, typename Narrow>
CHORUS_LANE_INLINE void storeNarrow(Narrow* p, Vec<uint32_t, N> u) {
  [[maybe_unused]] void* v = p;
#if CHORUS_KERNEL_VEC_BYTES == 64
  if constexpr (N == 16 && sizeof(Narrow) == 1) return _mm512_mask_cvtepi32_storeu_epi8(v, 0xffff, bitCast<__m512i>(u));
  if constexpr (N == 16 && sizeof(Narrow) == 2)
    return _mm512_mask_cvtepi32_storeu_epi16(v, 0xffff, bitCast<__m512i>(u));
#elif CHORUS_KERNEL_VEC_BYTES == 32
  if constexpr (N == 8) {
    const __m256i x = bitCast<__m256i>(u);
    const __m128i words = _mm_packus_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
    if constexpr (sizeof(Narrow) == 2) return _mm_storeu_si128(static_cast<__m128i*>(v), words);
    if constexpr (sizeof(Narrow) == 1)
      return _mm_storel_epi64(static_cast<__m128i*>(v), _mm_packus_epi16(words, words));
  }
#elif CHORUS_KERNEL_VEC_BYTES == 16
  if constexpr (N == 4) {
    // SSE2 has only signed 32->16 packing: sign-extend the low 16 bits first so it packs them unchanged.
    const __m128i x = _mm_srai_epi32(_mm_slli_epi32(bitCast<__m128i>(u), 16), 16);
    const __m128i words = _mm_packs_epi32(x, x);
    if constexpr (sizeof(Narrow) == 2) return _mm_storel_epi64(static_cast<__m128i*>(v), words);
    if constexpr (sizeof(Narrow) == 1) {
      const int32_t word = _mm_cvtsi128_si32(_mm_packus_epi16(words, words));
      std::memcpy(p, &word, 4);
      return;
    }
  }
#endif
  storeLanes(p, convertLanes<Vec<Narrow, N>>(u));
}

template <DType kT, int N>
CHORUS_LANE_INLINE Vec<C<kT>, N> load(const S<kT>* p) {
  using F = Vec<float, N>;
  using U = Vec<uint32_t, N>;
  if constexpr (!kNarrow<kT>) {
    return loadLanes<Vec<C<kT>, N>>(p);
  } else {
#if CHORUS_KERNEL_AVX512
    if constexpr (kT == DType::kFloat16 && N == 16) {
      // The masked forms with an all-ones mask compile to the plain instruction; the unmasked intrinsics trip
      // GCC 12's -Wmaybe-uninitialized on their internal _mm512_undefined_*().
      return bitCast<F>(
          _mm512_mask_cvtph_ps(_mm512_setzero_ps(), 0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))));
    }
#endif
#if CHORUS_KERNEL_F16C
    if constexpr (kT == DType::kFloat16 && N == 8) {
      return bitCast<F>(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
    }
#endif
    const U u = loadWiden<N>(p);
    if constexpr (kT == DType::kFloat16) return halfToFloatLanes<U, F>(u);
    if constexpr (kT == DType::kBfloat16) return bf16ToFloatLanes<U, F>(u);
    if constexpr (kT == DType::kFloat8e4m3) return e4m3ToFloatLanes<U, F>(u);
    if constexpr (kT == DType::kFloat8e5m2) return e5m2ToFloatLanes<U, F>(u);
  }
}

template <DType kT, int N>
CHORUS_LANE_INLINE void store(S<kT>* p, Vec<C<kT>, N> v) {
  using U = Vec<uint32_t, N>;
  using F = Vec<float, N>;
  if constexpr (!kNarrow<kT>) {
    storeLanes(p, v);
  } else {
#if CHORUS_KERNEL_AVX512
    if constexpr (kT == DType::kFloat16 && N == 16) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                          _mm512_mask_cvtps_ph(_mm256_setzero_si256(), 0xffff, bitCast<__m512>(v),
                                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      return;
    }
#endif
#if CHORUS_KERNEL_F16C
    if constexpr (kT == DType::kFloat16 && N == 8) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                       _mm256_cvtps_ph(bitCast<__m256>(v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      return;
    }
#endif
#if CHORUS_KERNEL_BF16
    if constexpr (kT == DType::kBfloat16 && N == 16) {
      // vcvtneps2bf16 flushes subnormal inputs to zero; software rounding keeps them, so vectors holding one
      // (rare) take the software path and the result matches scalar.
      const __m512i bits = bitCast<__m512i>(v);
      const __m512i absMinus1 =
          _mm512_sub_epi32(_mm512_and_si512(bits, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(1));
      if (_mm512_cmplt_epu32_mask(absMinus1, _mm512_set1_epi32(0x7fffff)) == 0) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), bitCast<__m256i>(_mm512_cvtneps_pbh(bitCast<__m512>(v))));
        return;
      }
    }
#endif
    const F f = v;
    U u;
    if constexpr (kT == DType::kFloat16) u = floatToHalfLanes<U, F>(f);
    if constexpr (kT == DType::kBfloat16) u = floatToBf16Lanes<U, F>(f);
    if constexpr (kT == DType::kFloat8e4m3) u = floatToE4m3Lanes<U, F>(f);
    if constexpr (kT == DType::kFloat8e5m2) u = floatToE5m2Lanes<U, F>(f);
    storeNarrow<N>(p, u);
  }
}

// v rounded to kT and widened back: the "round at every step" of narrow types.
template <DType kT, int N>
CHORUS_LANE_INLINE Vec<C<kT>, N> roundTo(Vec<C<kT>, N> v) {
  if constexpr (!kNarrow<kT>) {
    return v;
  } else {
    S<kT> buf[N];
    store<kT, N>(buf, v);
    return load<kT, N>(buf);
  }
}

// ---- the operations ------------------------------------------------------------------------------------------

// The NaN test, lane by lane: x != x, spelled in one place.
template <typename V>
CHORUS_LANE_INLINE auto nanMask(V x) {
  return x != x;  // NOLINT(misc-redundant-expression): true exactly for NaN
}

template <Op kOp, typename V>
CHORUS_LANE_INLINE V apply(V a, V b) {
  using L = Lane<V>;
  if constexpr (std::is_floating_point_v<L>) {
    // With two NaN operands x86 returns the first source's NaN, and the compiler may swap the operands of a
    // commutative add or multiply differently in scalar and vector code; pinning the result to local's NaN
    // (quieted by a + a) makes the payload the same on every ISA.
    if constexpr (kOp == Op::kSum || kOp == Op::kAvg) return select(nanMask(a), a + a, a + b);
    if constexpr (kOp == Op::kProd) return select(nanMask(a), a + a, a * b);
    if constexpr (kOp == Op::kMax) return select(nanMask(b), a, select(a > b, a, b));
    if constexpr (kOp == Op::kMin) return select(nanMask(b), a, select(a < b, a, b));
  } else {
    // Wrapping arithmetic in the unsigned type (signed overflow is undefined, in vectors too).
    constexpr int kN = sizeof(V) / sizeof(L);  // NOLINT(bugprone-sizeof-expression): lanes of a vector
    using UV = Vec<std::make_unsigned_t<L>, kN>;
    if constexpr (kOp == Op::kSum || kOp == Op::kAvg) {
      const UV r = bitCast<UV>(a) + bitCast<UV>(b);
      return bitCast<V>(r);
    }
    if constexpr (kOp == Op::kProd) {
      const UV r = bitCast<UV>(a) * bitCast<UV>(b);
      return bitCast<V>(r);
    }
    if constexpr (kOp == Op::kMax) return select(a > b, a, b);
    if constexpr (kOp == Op::kMin) return select(a < b, a, b);
  }
}

// dst = op(premul ? round(local * scale) : local, remote) over [0, n).
template <DType kT, Op kOp, bool kPremul>
void reduceRange(S<kT>* dst, const S<kT>* local, const S<kT>* remote, size_t n, C<kT> scale) {
  constexpr int kN = kLanes<kT>;
  size_t i = 0;
  if constexpr (kN > 1) {
    using V = Vec<C<kT>, kN>;
    const V s = splat<V>(scale);
    for (; i + kN <= n; i += kN) {
      V a = load<kT, kN>(local + i);
      if constexpr (kPremul) a = roundTo<kT, kN>(a * s);
      const V b = load<kT, kN>(remote + i);
      store<kT, kN>(dst + i, apply<kOp>(a, b));
    }
  }
  for (; i < n; ++i) {
    C<kT> a = load<kT, 1>(local + i);
    if constexpr (kPremul) a = roundTo<kT, 1>(a * scale);
    store<kT, 1>(dst + i, apply<kOp>(a, load<kT, 1>(remote + i)));
  }
}

// x / d truncating toward zero, for any integer type (d >= 1, at most INT64_MAX).
template <typename T>
CHORUS_LANE_INLINE T divTrunc(T x, int64_t d) {
  if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(static_cast<int64_t>(x) / d);
  } else {
    return static_cast<T>(static_cast<uint64_t>(x) / static_cast<uint64_t>(d));
  }
}

// Integer avg's last step. x86 has no vector integer division; this path runs once per reduction, on the
// final result, so it stays scalar.
template <DType kT, Op kOp>
void reducePostDiv(S<kT>* dst, const S<kT>* local, const S<kT>* remote, size_t n, int64_t postDiv) {
  for (size_t i = 0; i < n; ++i) {
    store<kT, 1>(dst + i, divTrunc(apply<kOp>(load<kT, 1>(local + i), load<kT, 1>(remote + i)), postDiv));
  }
}

template <DType kT, Op kOp>
void reduceKernel(void* dst, const void* local, const void* remote, size_t n, const ReduceParams& p) {
  auto* d = static_cast<S<kT>*>(dst);
  const auto* a = static_cast<const S<kT>*>(local);
  const auto* b = static_cast<const S<kT>*>(remote);
  if constexpr (kFloating<kT>) {
    if (p.premul != 1.0) {
      reduceRange<kT, kOp, true>(d, a, b, n, static_cast<C<kT>>(p.premul));
      return;
    }
  } else {
    if (p.postDiv != 1) {
      reducePostDiv<kT, kOp>(d, a, b, n, p.postDiv);
      return;
    }
  }
  reduceRange<kT, kOp, false>(d, a, b, n, C<kT>(1));
}

// dst = src * premul (floating, rounded once) or src / postDiv (integer); with no scaling, a plain copy that
// keeps every bit (NaN payloads included).
template <DType kT>
void scaleKernel(void* dst, const void* src, size_t n, const ReduceParams& p) {
  auto* d = static_cast<S<kT>*>(dst);
  const auto* s = static_cast<const S<kT>*>(src);
  if constexpr (kFloating<kT>) {
    if (p.premul != 1.0) {
      constexpr int kN = kLanes<kT>;
      const C<kT> scale = static_cast<C<kT>>(p.premul);
      size_t i = 0;
      if constexpr (kN > 1) {
        using V = Vec<C<kT>, kN>;
        const V sv = splat<V>(scale);
        for (; i + kN <= n; i += kN) store<kT, kN>(d + i, load<kT, kN>(s + i) * sv);
      }
      for (; i < n; ++i) store<kT, 1>(d + i, load<kT, 1>(s + i) * scale);
      return;
    }
  } else {
    if (p.postDiv != 1) {
      for (size_t i = 0; i < n; ++i) store<kT, 1>(d + i, divTrunc(load<kT, 1>(s + i), p.postDiv));
      return;
    }
  }
  if (dst != src) std::memcpy(dst, src, n * sizeof(S<kT>));
}

template <DType kT>
constexpr void fillRow(Kernels* row) {
  row[static_cast<int>(Op::kSum)] = {&reduceKernel<kT, Op::kSum>, &scaleKernel<kT>};
  row[static_cast<int>(Op::kProd)] = {&reduceKernel<kT, Op::kProd>, &scaleKernel<kT>};
  row[static_cast<int>(Op::kMax)] = {&reduceKernel<kT, Op::kMax>, &scaleKernel<kT>};
  row[static_cast<int>(Op::kMin)] = {&reduceKernel<kT, Op::kMin>, &scaleKernel<kT>};
  row[static_cast<int>(Op::kAvg)] = {&reduceKernel<kT, Op::kAvg>, &scaleKernel<kT>};
}

#if CHORUS_KERNEL_BF16

constexpr Kernels makeBf16Row(int op) {
  Kernels row[kNumOps] = {};
  fillRow<DType::kBfloat16>(row);
  return row[op];
}
constexpr Kernels kBf16Row[kNumOps] = {makeBf16Row(0), makeBf16Row(1), makeBf16Row(2), makeBf16Row(3), makeBf16Row(4)};

#else

// Streaming copy: align the destination, then write whole vectors around the cache (movnt*), then fence so
// the data is globally visible before whoever waits on this copy is told it is done.
void copyStreaming(void* dst, const void* src, size_t n) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  constexpr size_t kStep = CHORUS_KERNEL_VEC_BYTES == 0 ? 8 : CHORUS_KERNEL_VEC_BYTES;
  size_t head = (kStep - reinterpret_cast<uintptr_t>(d) % kStep) % kStep;
  if (head > n) head = n;
  std::memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  for (; n >= kStep; d += kStep, s += kStep, n -= kStep) {
#if CHORUS_KERNEL_VEC_BYTES == 64
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d), _mm512_loadu_si512(s));
#elif CHORUS_KERNEL_VEC_BYTES == 32
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
#elif CHORUS_KERNEL_VEC_BYTES == 16
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
#else
    long long v;
    std::memcpy(&v, s, sizeof v);
    _mm_stream_si64(reinterpret_cast<long long*>(d), v);
#endif
  }
  _mm_sfence();
  std::memcpy(d, s, n);
}

template <DType kT>
constexpr void fillType(IsaTable& t) {
  fillRow<kT>(t.kernels[static_cast<int>(kT)]);
}

constexpr IsaTable makeTable() {
  IsaTable t = {};
  fillType<DType::kInt8>(t);
  fillType<DType::kUint8>(t);
  fillType<DType::kInt32>(t);
  fillType<DType::kUint32>(t);
  fillType<DType::kInt64>(t);
  fillType<DType::kUint64>(t);
  fillType<DType::kFloat16>(t);
  fillType<DType::kFloat32>(t);
  fillType<DType::kFloat64>(t);
  fillType<DType::kBfloat16>(t);
  fillType<DType::kFloat8e4m3>(t);
  fillType<DType::kFloat8e5m2>(t);
  t.copyStreaming = &copyStreaming;
  return t;
}

constexpr IsaTable kTable = makeTable();

#endif  // CHORUS_KERNEL_BF16

}  // namespace chorus::reduce::CHORUS_KERNEL_NS
