// Byte ranges in memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chorus {

// Whether [a, a + an) and [b, b + bn) share a byte (empty ranges share none).
inline bool overlaps(const void* a, size_t an, const void* b, size_t bn) {
  const auto x = reinterpret_cast<uintptr_t>(a);
  const auto y = reinterpret_cast<uintptr_t>(b);
  return an > 0 && bn > 0 && x < y + bn && y < x + an;
}

}  // namespace chorus
