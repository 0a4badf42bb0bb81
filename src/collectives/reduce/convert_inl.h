// Conversions between float32 and the narrow float types, written once over lanes (lanes_inl.h): U holds
// uint32 lanes, F float32 lanes of the same count. No include guard: included inside each ISA's namespace and
// by convert.cc for the public scalar conversions, so the scalar functions, the scalar kernels and the SSE2
// vector kernels are literally the same code.
//
// All conversions round to nearest even and never depend on MXCSR's DAZ/FTZ: the float arithmetic they use
// (for subnormal results) only ever sees normal operands or produces a result whose exactness does not depend
// on denormal inputs. NaNs are quieted exactly as F16C and AVX512-BF16 do (payload truncated, quiet bit set),
// so hardware conversions can be used where present and agree bit for bit.
//
// fp8 follows CUDA's __nv_fp8 with __NV_SATFINITE: finite values and infinities beyond the largest finite
// value saturate to it (e4m3 +-448, e5m2 +-57344); NaN becomes the type's quiet NaN with the input's sign.

// float16 bits (low 16 bits of each lane) to float32.
template <typename U, typename F>
CHORUS_LANE_INLINE F halfToFloatLanes(U h) {
  const U sign = (h & 0x8000u) << 16;
  const U o = (h & 0x7fffu) << 13;  // exponent and mantissa moved to their float32 positions
  const U exp = o & 0x0f800000u;
  const U normal = o + ((127u - 15u) << 23);
  // Subnormal: 2^-14 * (1 + m/1024) - 2^-14 == m * 2^-24, computed on normal floats only.
  const U sub = bitCast<U>(bitCast<F>(o + (113u << 23)) - splat<F>(0x1p-14f));
  const U special = o | 0x7f800000u;  // infinity, or NaN with its payload
  const U quieted = select((o & 0x7fffffu) != 0u, special | 0x400000u, special);
  U r = select(exp == 0u, sub, normal);
  r = select(exp == 0x0f800000u, quieted, r);
  return bitCast<F>(r | sign);
}

// float32 to float16 bits (in the low 16 bits of each lane).
template <typename U, typename F>
CHORUS_LANE_INLINE U floatToHalfLanes(F f) {
  const U bits = bitCast<U>(f);
  const U sign = bits & 0x80000000u;
  const U a = bits ^ sign;
  // Below 2^-14 the result is subnormal: adding 0.5 (ulp 2^-24, the float16 subnormal step) leaves the
  // rounded-to-nearest-even result in the low mantissa bits.
  const U sub = bitCast<U>(bitCast<F>(a) + splat<F>(0.5f)) - (126u << 23);
  // Normal: rebias, then round to nearest even on the 13 dropped bits (a carry may bump the exponent, up to
  // infinity, which is the right answer).
  const U normal = (a + ((15u - 127u) << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
  U r = select(a < (113u << 23), sub, normal);
  r = select(a >= (143u << 23), splat<U>(0x7c00u), r);             // >= 65536: infinity
  r = select(a > 0x7f800000u, ((a >> 13) & 0x3ffu) | 0x7e00u, r);  // NaN: quiet, payload truncated
  return r | (sign >> 16);
}

template <typename U, typename F>
CHORUS_LANE_INLINE F bf16ToFloatLanes(U h) {
  return bitCast<F>(h << 16);
}

template <typename U, typename F>
CHORUS_LANE_INLINE U floatToBf16Lanes(F f) {
  const U bits = bitCast<U>(f);
  const U rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  return select((bits & 0x7fffffffu) > 0x7f800000u, (bits >> 16) | 0x40u, rounded);
}

// e4m3: bias 7, 3 mantissa bits, no infinities, S.1111.111 is NaN.
template <typename U, typename F>
CHORUS_LANE_INLINE F e4m3ToFloatLanes(U v) {
  const U sign = (v & 0x80u) << 24;
  const U o = (v & 0x7fu) << 20;
  const U exp = o & 0x07800000u;
  const U normal = o + ((127u - 7u) << 23);
  const U sub = bitCast<U>(bitCast<F>(o + (121u << 23)) - splat<F>(0x1p-6f));  // m * 2^-9
  U r = select(exp == 0u, sub, normal);
  r = select((v & 0x7fu) == 0x7fu, splat<U>(0x7fc00000u), r);
  return bitCast<F>(r | sign);
}

template <typename U, typename F>
CHORUS_LANE_INLINE U floatToE4m3Lanes(F f) {
  const U bits = bitCast<U>(f);
  const U sign = bits & 0x80000000u;
  const U a = bits ^ sign;
  const U sub = bitCast<U>(bitCast<F>(a) + splat<F>(0x1p14f)) - (141u << 23);  // ulp(2^14) == 2^-9
  const U normal = (a + ((7u - 127u) << 23) + 0x7ffffu + ((a >> 20) & 1u)) >> 20;
  U r = select(a < (121u << 23), sub, normal);
  r = select(a >= 0x43e00000u, splat<U>(0x7eu), r);  // >= 448, infinity included: saturate
  r = select(a > 0x7f800000u, splat<U>(0x7fu), r);
  return r | (sign >> 24);
}

// e5m2 is the top byte of a float16.
template <typename U, typename F>
CHORUS_LANE_INLINE F e5m2ToFloatLanes(U v) {
  return halfToFloatLanes<U, F>(v << 8);
}

template <typename U, typename F>
CHORUS_LANE_INLINE U floatToE5m2Lanes(F f) {
  const U bits = bitCast<U>(f);
  const U sign = bits & 0x80000000u;
  const U a = bits ^ sign;
  const U sub = bitCast<U>(bitCast<F>(a) + splat<F>(0x1p7f)) - (134u << 23);  // ulp(2^7) == 2^-16
  const U normal = (a + ((15u - 127u) << 23) + 0xfffffu + ((a >> 21) & 1u)) >> 21;
  U r = select(a < (113u << 23), sub, normal);
  r = select(a >= 0x47600000u, splat<U>(0x7bu), r);  // >= 57344, infinity included: saturate
  r = select(a > 0x7f800000u, splat<U>(0x7eu), r);
  return r | (sign >> 24);
}
