// The socket transport's wire protocol.
//
// A connection is nstreams TCP connections. Each starts with a Hello from the sender: magic, the stream's
// index and the receiver's 128-bit token (from the descriptor), so that a stranger who finds the listener is
// dropped. After that the streams carry the FIFO's slots in order:
//   stream 0:   for each slot, an 8-byte payload size, then its chunk of the payload
//   stream i>0: for each slot, only its chunk (the size is known from stream 0; the chunk may be empty)
// A slot's payload is cut into chunks of at least kMinChunk bytes, one per stream, so small slots travel
// whole on stream 0 (one send, no wait for the other streams) and large ones use every stream at once.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chorus::transport::socket {

constexpr size_t kTokenBytes = 16;
constexpr uint32_t kHelloMagic = 0x4348534b;  // "CHSK"
constexpr uint32_t kMaxStreams = 64;
constexpr uint64_t kMinChunk = 64 << 10;

struct Hello {
  uint32_t magic;
  uint32_t stream;
  uint8_t token[kTokenBytes];
};
static_assert(sizeof(Hello) == 24);

// The byte range [*lo, *hi) of a `total`-byte slot that stream s of n carries.
inline void chunkRange(uint64_t total, uint32_t n, uint32_t s, uint64_t* lo, uint64_t* hi) {
  uint64_t per = (total + n - 1) / n;
  if (per < kMinChunk) per = kMinChunk;
  per = (per + 4095) & ~uint64_t(4095);  // page-aligned chunk boundaries
  uint64_t a = per * s;
  *lo = a < total ? a : total;
  uint64_t b = *lo + per;
  *hi = b < total ? b : total;
}

}  // namespace chorus::transport::socket
