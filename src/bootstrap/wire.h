// The bootstrap's wire protocol, as pure functions and state machines with no I/O, so that the parser can be
// fuzzed (tests/fuzz/fuzz_bootstrap_wire.cc) and the endpoint's service thread only moves bytes.
//
// Every message is a frame: a fixed 40-byte little-endian header, then `length` payload bytes.
//   magic u32 | version u8 | type u8 | reserved u16 (0) | commHash u64 | src i32 | dst i32 | tag u64 | length u64
// The header is validated (magic, version, type, reserved, the type's length rule and the connection's cap)
// before a single payload byte is buffered, so a peer cannot make us allocate more than the cap.
//
// The handshake that authenticates a connection is handshake.h's; after it the connection carries DATA frames
// (purpose data) or one REGISTER and then a TABLE or ERROR reply (purpose rendezvous).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/socket.h"
#include "base/status.h"
#include "bootstrap/hmac.h"

namespace chorus::bootstrap {

constexpr uint32_t kFrameMagic = 0x46424843;  // "CHBF" little-endian
constexpr uint8_t kWireVersion = 1;
constexpr size_t kHeaderBytes = 40;
constexpr size_t kAddressBytes = 20;
// Payload caps: before authentication only handshake frames fit; after it, data up to 64 MiB.
constexpr uint64_t kMaxHandshakePayload = 256;
constexpr uint64_t kMaxDataPayload = 64ull << 20;
constexpr size_t kMaxErrorText = 4096;
// The rendezvous table travels in one frame.
constexpr uint64_t kMaxRanks = kMaxDataPayload / kAddressBytes;
// Payload sizes of the fixed-size frames.
constexpr size_t kHelloPayloadBytes = kNonceBytes + kAddressBytes;
constexpr size_t kChallengePayloadBytes = kNonceBytes + kMacBytes;
constexpr size_t kResponsePayloadBytes = kMacBytes;
constexpr size_t kRegistrationPayloadBytes = 8 + kAddressBytes;

enum class FrameType : uint8_t {
  kHello = 1,
  kChallenge = 2,
  kResponse = 3,
  kRegister = 4,
  kTable = 5,
  kError = 6,
  kData = 7,
};
const char* frameTypeName(FrameType t);

// What an authenticated connection is for (HELLO's tag).
enum class Purpose : uint64_t { kData = 0, kRendezvous = 1 };

struct FrameHeader {
  FrameType type = FrameType::kData;
  uint64_t commHash = 0;
  int32_t src = -1;
  int32_t dst = -1;
  uint64_t tag = 0;
  uint64_t length = 0;
};

struct Frame {
  FrameHeader header;
  std::vector<uint8_t> payload;
};

// Serializes a header into out[kHeaderBytes].
void encodeHeader(const FrameHeader& h, uint8_t* out);
// Header and payload in one buffer (header.length is set from the payload size).
std::vector<uint8_t> encodeFrame(FrameHeader h, const void* payload, size_t size);
// Validates a header against the wire rules and a payload cap; returns an error text, or nullopt when valid.
std::optional<std::string> decodeHeader(const uint8_t* in, uint64_t maxPayload, FrameHeader* out);

// Little-endian integers on the wire (and in the unique id).
void putU16(uint8_t* p, uint16_t x);
void putU32(uint8_t* p, uint32_t x);
void putU64(uint8_t* p, uint64_t x);
uint16_t getU16(const uint8_t* p);
uint32_t getU32(const uint8_t* p);
uint64_t getU64(const uint8_t* p);

// Addresses on the wire: family u16 (4 or 6) | port u16 | 16 address bytes (IPv4 in the first 4).
void encodeAddress(const SocketAddress& a, uint8_t out[kAddressBytes]);
// Returns an invalid address on an unknown family.
SocketAddress decodeAddress(const uint8_t in[kAddressBytes]);

// Incremental frame parser over a byte stream with partial reads. Usage:
//   while (n > 0) { size_t k = p.feed(data, n); data += k; n -= k;
//                   if (p.failed()) drop; if (p.hasFrame()) handle(p.take()); }
// feed stops after each complete frame so the caller may change the cap between frames (after the
// handshake).
class FrameParser {
 public:
  explicit FrameParser(uint64_t maxPayload) : maxPayload_(maxPayload) {}
  void setMaxPayload(uint64_t cap) { maxPayload_ = cap; }

  // Consumes bytes up to the end of the next frame; returns how many it used (0 once failed or holding a frame).
  size_t feed(const uint8_t* data, size_t n);
  bool hasFrame() const { return ready_; }
  Frame take();
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  // True while part of a frame has arrived (the endpoint times out frames that stall here).
  bool midFrame() const { return headerFill_ > 0 && !ready_; }

 private:
  uint64_t maxPayload_;
  uint8_t headerBuf_[kHeaderBytes] = {};
  size_t headerFill_ = 0;
  bool haveHeader_ = false;
  bool ready_ = false;
  Frame frame_;
  size_t payloadFill_ = 0;
  std::string error_;
};

// Rendezvous payloads.
struct Registration {
  int32_t rank = -1;
  int32_t nranks = 0;
  SocketAddress endpoint;
};
std::vector<uint8_t> encodeRegistration(const Registration& r);
std::optional<Registration> decodeRegistration(const std::vector<uint8_t>& payload);
std::vector<uint8_t> encodeTable(const std::vector<SocketAddress>& table);
std::optional<std::vector<SocketAddress>> decodeTable(const std::vector<uint8_t>& payload);
std::vector<uint8_t> encodeErrorPayload(Status status, const std::string& text);
// Returns false on a malformed payload.
bool decodeErrorPayload(const std::vector<uint8_t>& payload, Status* status, std::string* text);

}  // namespace chorus::bootstrap
