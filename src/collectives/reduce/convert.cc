// The public scalar conversions: the lane templates of convert_inl.h on one lane, the same code the kernels use.
#include <cstdint>
#include <type_traits>
#include <utility>

#include "collectives/reduce/reduce.h"

#define CHORUS_LANE_INLINE inline __attribute__((always_inline))

namespace chorus::reduce {
namespace convert_detail {
#include "collectives/reduce/lanes_inl.h"
// clang-format off
#include "collectives/reduce/convert_inl.h"
// clang-format on
}  // namespace convert_detail

using convert_detail::bf16ToFloatLanes;
using convert_detail::e4m3ToFloatLanes;
using convert_detail::e5m2ToFloatLanes;
using convert_detail::floatToBf16Lanes;
using convert_detail::floatToE4m3Lanes;
using convert_detail::floatToE5m2Lanes;
using convert_detail::floatToHalfLanes;
using convert_detail::halfToFloatLanes;

float halfToFloat(uint16_t h) {
  return halfToFloatLanes<uint32_t, float>(h);
}
uint16_t floatToHalf(float f) {
  return static_cast<uint16_t>(floatToHalfLanes<uint32_t, float>(f));
}
float bf16ToFloat(uint16_t b) {
  return bf16ToFloatLanes<uint32_t, float>(b);
}
uint16_t floatToBf16(float f) {
  return static_cast<uint16_t>(floatToBf16Lanes<uint32_t, float>(f));
}
float e4m3ToFloat(uint8_t v) {
  return e4m3ToFloatLanes<uint32_t, float>(v);
}
uint8_t floatToE4m3(float f) {
  return static_cast<uint8_t>(floatToE4m3Lanes<uint32_t, float>(f));
}
float e5m2ToFloat(uint8_t v) {
  return e5m2ToFloatLanes<uint32_t, float>(v);
}
uint8_t floatToE5m2(float f) {
  return static_cast<uint8_t>(floatToE5m2Lanes<uint32_t, float>(f));
}

}  // namespace chorus::reduce
