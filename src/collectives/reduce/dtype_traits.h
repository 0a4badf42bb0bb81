// The element types as the reduction code sees them, one table for the host kernels (kernels_impl.h) and the
// device reduction (device/reduce_device.h): S is how a value is stored, C the type it is computed in. Narrow
// floating types (float16, bfloat16, fp8) are stored as their bits and computed in float32.
#pragma once

#include <cstdint>
#include <type_traits>

#include "collectives/reduce/reduce.h"

namespace chorus::reduce {

template <DType kT>
struct DTypeTraits;
#define CHORUS_DTYPE_TRAITS(t, s, c) \
  template <>                        \
  struct DTypeTraits<DType::t> {     \
    using S = s;                     \
    using C = c;                     \
  };
CHORUS_DTYPE_TRAITS(kInt8, int8_t, int8_t)
CHORUS_DTYPE_TRAITS(kUint8, uint8_t, uint8_t)
CHORUS_DTYPE_TRAITS(kInt32, int32_t, int32_t)
CHORUS_DTYPE_TRAITS(kUint32, uint32_t, uint32_t)
CHORUS_DTYPE_TRAITS(kInt64, int64_t, int64_t)
CHORUS_DTYPE_TRAITS(kUint64, uint64_t, uint64_t)
CHORUS_DTYPE_TRAITS(kFloat16, uint16_t, float)  // __half bits
CHORUS_DTYPE_TRAITS(kFloat32, float, float)
CHORUS_DTYPE_TRAITS(kFloat64, double, double)
CHORUS_DTYPE_TRAITS(kBfloat16, uint16_t, float)   // __nv_bfloat16 bits
CHORUS_DTYPE_TRAITS(kFloat8e4m3, uint8_t, float)  // __nv_fp8_e4m3 bits
CHORUS_DTYPE_TRAITS(kFloat8e5m2, uint8_t, float)  // __nv_fp8_e5m2 bits
#undef CHORUS_DTYPE_TRAITS

// True for the floating types (isFloating() at compile time).
template <DType kT>
inline constexpr bool kFloatingDType = std::is_floating_point_v<typename DTypeTraits<kT>::C>;

}  // namespace chorus::reduce
