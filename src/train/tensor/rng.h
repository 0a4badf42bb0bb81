// Deterministic random numbers that depend only on their inputs (a seed and counters), never on the order in
// which ranks or threads ask for them: the trainer's initialisation and data sampling are functions of
// (seed, what, index), so every layout draws the same numbers for the same tensor element or sequence.
#ifndef CHORUS_TRAIN_TENSOR_RNG_H_
#define CHORUS_TRAIN_TENSOR_RNG_H_

#include <cmath>
#include <cstdint>
#include <string_view>

namespace chorus::train {

// SplitMix64's finaliser: a bijective mix of 64 bits.
inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline uint64_t hashCombine(uint64_t a, uint64_t b) {
  return mix64(a ^ mix64(b));
}

// FNV-1a of a name, to key a stream by a tensor's name.
inline uint64_t hashName(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// A uniform double in [0, 1) from 53 bits of a key.
inline double uniform01(uint64_t key) {
  return static_cast<double>(mix64(key) >> 11) * 0x1.0p-53;
}

// A standard normal from a key (Box-Muller over two derived uniforms).
inline double normal(uint64_t key) {
  double u1 = uniform01(hashCombine(key, 1));
  double u2 = uniform01(hashCombine(key, 2));
  return std::sqrt(-2.0 * std::log1p(-u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_TENSOR_RNG_H_
