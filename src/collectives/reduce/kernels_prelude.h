// Internal: what an ISA's kernel file includes before `#pragma GCC target` and kernels_impl.h. Every header
// the kernels need is included here, under the default target, so that no inline function from a system
// header gets compiled (and possibly linked elsewhere) with a wider ISA.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "collectives/reduce/dtype_traits.h"
#include "collectives/reduce/kernel_tables.h"
#include "collectives/reduce/reduce.h"

#define CHORUS_LANE_INLINE inline __attribute__((always_inline))
