// What the ib plugin's two sides say to each other, and the rules both apply in the same way.
//
// Setup, over the TCP socket whose address the listen handle carries (the socket stays open afterwards: its
// end-of-file tells a side at once that the peer's process died):
//   sender -> receiver   ConnInfo: the listener's token (strangers are dropped), the sender's port address
//                        (LID, GID, MTU), its QP numbers and first PSN, and how many QPs the connection has
//   receiver -> sender   ConnInfo: the receiver's address and QP numbers (as many QPs as the sender asked)
//   sender -> receiver   kReady, once the sender's QPs are ready to receive (RTR): only then may the receiver
//                        send on them, since a packet that reaches a QP not yet in RTR is dropped and waits for
//                        the retransmission timer (seconds)
//
// Messages (NCCL's IB transport, with the receiver's descriptors sent rather than written):
//   1. irecv on the receiver posts a receive work request on each QP the message will use, then SENDs a
//      clear-to-send (Cts) on QP 0: the buffer's address, rkey and size, the tag, and which QPs carry it.
//   2. The sender matches Cts messages to its isends in order. For each it checks the tag and the size and
//      RDMA-WRITEs its stripe of the payload on each QP named, WITH IMMEDIATE: the immediate is the message's
//      size (or an error code when the tag or size did not fit), so the receiver's completion says what arrived.
//      The writes ask for a solicited event, which is what the receiver's completion channel waits for.
//   3. The receive completes when every QP's write arrived; the send when every write is acknowledged.
#pragma once

#include <algorithm>
#include <cstdint>

#include "transport/net/net.h"
#include "transport/net/plugin_util.h"

namespace chorus::netplugin::ib {

constexpr uint32_t kHandleMagic = 0x43484942;  // "CHIB"
constexpr uint32_t kInfoMagic = 0x43484943;
constexpr uint32_t kReady = 0x43484952;
constexpr int kMaxQps = 16;
constexpr int kMaxRequests = 64;  // outstanding isend/irecv (and iflush) per comm
// Largest message: the immediate carries its size in 31 bits.
constexpr uint64_t kMaxMessage = (uint64_t(1) << 31) - 1;
// A receive of at least this many bytes per QP is striped over several QPs.
constexpr uint64_t kMinStripe = 64 << 10;

// What listen() publishes; `stage` holds the connect in progress (net.h: connect).
struct Handle {
  uint32_t magic;
  uint32_t pad;
  uint64_t token;  // random; the sender presents it
  WireAddress addr;
  void* stage;
};
static_assert(sizeof(Handle) <= CHORUS_NET_HANDLE_MAXSIZE);

// One side's address and QPs.
struct ConnInfo {
  uint32_t magic;
  uint32_t nqps;
  uint64_t token;
  uint8_t linkLayer;  // IBV_LINK_LAYER_INFINIBAND or _ETHERNET
  uint8_t mtu;        // enum ibv_mtu of the port
  uint16_t lid;
  uint32_t psn;  // first packet sequence number of every QP of this side
  uint8_t gid[16];
  uint32_t qpn[kMaxQps];
};

// The receiver's clear-to-send for one message.
struct Cts {
  uint64_t seq;       // the receive's position in posting order
  uint64_t addr;      // where the payload goes
  uint64_t capacity;  // the receive's size
  uint32_t rkey;
  uint32_t tag;
  uint16_t firstQp;  // the message uses QPs firstQp, firstQp + 1, ... (mod the connection's QP count)
  uint16_t nqps;
  uint32_t pad;
};
static_assert(sizeof(Cts) == 40);
constexpr uint32_t kCtsInline = 64;  // inline data the QPs are created with (Cts travels inline where it fits)

// The immediate of a data write: the message's size, or an error. Both sides agree on it.
constexpr uint32_t kImmError = 1u << 31;
constexpr uint32_t kImmTruncated = 1u << 30;  // with kImmError: the low 30 bits hold the message size (clipped)
inline uint32_t immSize(uint64_t size) {
  return static_cast<uint32_t>(size);
}
inline uint32_t immTagMismatch(uint32_t tag) {
  return kImmError | tag;
}
inline uint32_t immTruncated(uint64_t size) {
  return kImmError | kImmTruncated | static_cast<uint32_t>(std::min<uint64_t>(size, kImmTruncated - 1));
}

// How many of the connection's `nqps` QPs a receive of `capacity` bytes uses: one per kMinStripe bytes.
inline uint32_t qpsForReceive(uint64_t capacity, uint32_t nqps) {
  return static_cast<uint32_t>(std::clamp<uint64_t>(capacity / kMinStripe, 1, nqps));
}

// The bytes [*lo, *hi) of a `size`-byte message that the i-th of its n QPs carries: page-aligned pieces, in
// order; trailing ones may be empty (their write still carries the immediate).
inline void stripe(uint64_t size, uint32_t n, uint32_t i, uint64_t* lo, uint64_t* hi) {
  uint64_t per = (size + n - 1) / n;
  per = (per + 4095) & ~uint64_t(4095);
  *lo = std::min(per * i, size);
  *hi = std::min(*lo + per, size);
}

}  // namespace chorus::netplugin::ib
