// The built-in socket network plugin (TCP; socket_plugin.cc) and its wire format, which tests inspect.
//
// A net-communicator is nstreams TCP connections. Each starts with a Hello from the sender: magic, the
// stream's index and the receiver's 128-bit token (from the handle), so that a stranger who finds the listener
// is dropped. After that the streams carry the messages in order:
//   stream 0:   for each message, a Header (tag, size), then its chunk of the payload
//   stream i>0: for each message, only its chunk (the size is known from stream 0; the chunk may be empty)
#pragma once

#include <algorithm>
#include <cstdint>

#include "transport/net/net.h"
#include "transport/net/plugin_util.h"

namespace chorus::transport::net {

// The plugin table CHORUS_NET=socket (the default) selects.
const chorusNet_v1_t* socketPlugin();

}  // namespace chorus::transport::net

namespace chorus::netplugin::sock {

constexpr uint32_t kMagic = 0x43484e53;  // "CHNS"
constexpr size_t kTokenBytes = 16;
constexpr uint32_t kMaxStreams = 64;
constexpr uint64_t kMinChunk = 64 << 10;

// What a receiver's listen() publishes; `stage` holds the connect in progress (net.h: connect).
struct Handle {
  uint32_t magic;
  uint32_t nstreams;
  WireAddress addr;
  uint8_t token[kTokenBytes];
  void* stage;
};
static_assert(sizeof(Handle) <= CHORUS_NET_HANDLE_MAXSIZE);

struct Hello {
  uint32_t magic;
  uint32_t stream;
  uint8_t token[kTokenBytes];
};

struct Header {
  uint32_t tag;
  uint32_t pad;
  uint64_t size;
};

// The byte range [*lo, *hi) of a `total`-byte message that stream s of n carries: page-aligned chunks of at
// least kMinChunk bytes, so small messages travel whole on stream 0.
inline void chunkRange(uint64_t total, uint32_t n, uint32_t s, uint64_t* lo, uint64_t* hi) {
  uint64_t per = (total + n - 1) / n;
  per = std::max(per, kMinChunk);
  per = (per + 4095) & ~uint64_t(4095);
  *lo = std::min(per * s, total);
  *hi = std::min(*lo + per, total);
}

}  // namespace chorus::netplugin::sock
