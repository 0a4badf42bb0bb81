// Integer helpers for the pattern and algorithm headers: usable on the host and in CUDA kernels (no std::min,
// which is not a device function).
#pragma once

#include <cstddef>

#include "base/host_device.h"

namespace chorus::coll {

template <typename T>
CHORUS_HOST_DEVICE T minOf(T a, T b) {
  return b < a ? b : a;
}

template <typename T>
CHORUS_HOST_DEVICE T maxOf(T a, T b) {
  return a < b ? b : a;
}

// ceil(a / b) for b > 0.
CHORUS_HOST_DEVICE size_t divUp(size_t a, size_t b) {
  return (a + b - 1) / b;
}

// The smallest multiple of b that is >= a, for b > 0.
CHORUS_HOST_DEVICE size_t roundUp(size_t a, size_t b) {
  return divUp(a, b) * b;
}

}  // namespace chorus::coll
