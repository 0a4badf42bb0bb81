// bfloat16 <-> float conversion for the optional bf16 gradient communication (--grad-comm-dtype bf16): the
// upper 16 bits of a float, rounded to nearest even, as PyTorch and Chorus's own kernels round.
#ifndef CHORUS_TRAIN_COMM_BF16_H_
#define CHORUS_TRAIN_COMM_BF16_H_

#include <cstdint>
#include <cstring>

#include "tensor/hd.h"

namespace chorus::train {

CHORUS_TRAIN_HD uint16_t floatToBf16(float f) {
  auto u = static_cast<uint32_t>(floatBits(f));
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

CHORUS_TRAIN_HD float bf16ToFloat(uint16_t h) {
  return bitsFloat(static_cast<int32_t>(static_cast<uint32_t>(h) << 16));
}

inline void toBf16(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = floatToBf16(src[i]);
}
inline void fromBf16(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16ToFloat(src[i]);
}

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_COMM_BF16_H_
