#include "bootstrap/wire.h"

#include <arpa/inet.h>

#include <cstring>

namespace chorus::bootstrap {

void putU16(uint8_t* p, uint16_t x) {
  p[0] = static_cast<uint8_t>(x);
  p[1] = static_cast<uint8_t>(x >> 8);
}
void putU32(uint8_t* p, uint32_t x) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(x >> (8 * i));
}
void putU64(uint8_t* p, uint64_t x) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(x >> (8 * i));
}
uint16_t getU16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
uint32_t getU32(const uint8_t* p) {
  uint32_t x = 0;
  for (int i = 0; i < 4; ++i) x |= static_cast<uint32_t>(p[i]) << (8 * i);
  return x;
}
uint64_t getU64(const uint8_t* p) {
  uint64_t x = 0;
  for (int i = 0; i < 8; ++i) x |= static_cast<uint64_t>(p[i]) << (8 * i);
  return x;
}

const char* frameTypeName(FrameType t) {
  switch (t) {
    case FrameType::kHello: return "HELLO";
    case FrameType::kChallenge: return "CHALLENGE";
    case FrameType::kResponse: return "RESPONSE";
    case FrameType::kRegister: return "REGISTER";
    case FrameType::kTable: return "TABLE";
    case FrameType::kError: return "ERROR";
    case FrameType::kData: return "DATA";
  }
  return "?";
}

void encodeHeader(const FrameHeader& h, uint8_t* out) {
  putU32(out, kFrameMagic);
  out[4] = kWireVersion;
  out[5] = static_cast<uint8_t>(h.type);
  putU16(out + 6, 0);
  putU64(out + 8, h.commHash);
  putU32(out + 16, static_cast<uint32_t>(h.src));
  putU32(out + 20, static_cast<uint32_t>(h.dst));
  putU64(out + 24, h.tag);
  putU64(out + 32, h.length);
}

std::vector<uint8_t> encodeFrame(FrameHeader h, const void* payload, size_t size) {
  h.length = size;
  std::vector<uint8_t> out(kHeaderBytes + size);
  encodeHeader(h, out.data());
  if (size > 0) memcpy(out.data() + kHeaderBytes, payload, size);
  return out;
}

std::optional<std::string> decodeHeader(const uint8_t* in, uint64_t maxPayload, FrameHeader* out) {
  if (getU32(in) != kFrameMagic) return "bad frame magic (not a Chorus bootstrap peer)";
  if (in[4] != kWireVersion) return "unsupported wire version " + std::to_string(in[4]);
  uint8_t type = in[5];
  if (type < static_cast<uint8_t>(FrameType::kHello) || type > static_cast<uint8_t>(FrameType::kData)) {
    return "unknown frame type " + std::to_string(type);
  }
  if (getU16(in + 6) != 0) return "non-zero reserved header bits";
  FrameHeader h;
  h.type = static_cast<FrameType>(type);
  h.commHash = getU64(in + 8);
  h.src = static_cast<int32_t>(getU32(in + 16));
  h.dst = static_cast<int32_t>(getU32(in + 20));
  h.tag = getU64(in + 24);
  h.length = getU64(in + 32);
  if (h.length > maxPayload) {
    return std::string(frameTypeName(h.type)) + " frame of " + std::to_string(h.length) +
           " bytes exceeds the limit of " + std::to_string(maxPayload);
  }
  // Fixed-size frames must have exactly their size; the others have their own bounds.
  uint64_t want = 0;
  switch (h.type) {
    case FrameType::kHello: want = kHelloPayloadBytes; break;
    case FrameType::kChallenge: want = kChallengePayloadBytes; break;
    case FrameType::kResponse: want = kResponsePayloadBytes; break;
    case FrameType::kRegister: want = kRegistrationPayloadBytes; break;
    case FrameType::kTable:
      if (h.length == 0 || h.length % kAddressBytes != 0) return "TABLE length is not a whole number of addresses";
      break;
    case FrameType::kError:
      if (h.length < 4 || h.length > 4 + kMaxErrorText) return "ERROR frame length out of range";
      break;
    case FrameType::kData: break;
  }
  if (want != 0 && h.length != want) {
    return std::string(frameTypeName(h.type)) + " frame has length " + std::to_string(h.length) + ", expected " +
           std::to_string(want);
  }
  *out = h;
  return std::nullopt;
}

void encodeAddress(const SocketAddress& a, uint8_t out[kAddressBytes]) {
  memset(out, 0, kAddressBytes);
  if (a.family() == AF_INET) {
    putU16(out, 4);
    putU16(out + 2, static_cast<uint16_t>(a.port()));
    memcpy(out + 4, &reinterpret_cast<const sockaddr_in*>(a.sa())->sin_addr, 4);
  } else if (a.family() == AF_INET6) {
    putU16(out, 6);
    putU16(out + 2, static_cast<uint16_t>(a.port()));
    memcpy(out + 4, &reinterpret_cast<const sockaddr_in6*>(a.sa())->sin6_addr, 16);
  }
}

SocketAddress decodeAddress(const uint8_t in[kAddressBytes]) {
  uint16_t fam = getU16(in);
  int port = getU16(in + 2);
  if (fam == 4) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(static_cast<uint16_t>(port));
    memcpy(&sin.sin_addr, in + 4, 4);
    return SocketAddress::fromSockaddr(reinterpret_cast<sockaddr*>(&sin), sizeof(sin));
  }
  if (fam == 6) {
    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    sin6.sin6_port = htons(static_cast<uint16_t>(port));
    memcpy(&sin6.sin6_addr, in + 4, 16);
    return SocketAddress::fromSockaddr(reinterpret_cast<sockaddr*>(&sin6), sizeof(sin6));
  }
  return SocketAddress();
}

// ---- FrameParser ----

size_t FrameParser::feed(const uint8_t* data, size_t n) {
  if (failed() || ready_) return 0;
  size_t used = 0;
  if (!haveHeader_) {
    size_t k = std::min(n, kHeaderBytes - headerFill_);
    memcpy(headerBuf_ + headerFill_, data, k);
    headerFill_ += k;
    used += k;
    if (headerFill_ < kHeaderBytes) return used;
    // Validate before buffering any payload: the cap bounds what we allocate.
    if (auto err = decodeHeader(headerBuf_, maxPayload_, &frame_.header)) {
      error_ = *err;
      return used;
    }
    haveHeader_ = true;
    frame_.payload.assign(frame_.header.length, 0);
    payloadFill_ = 0;
  }
  size_t k = std::min(n - used, frame_.payload.size() - payloadFill_);
  if (k > 0) memcpy(frame_.payload.data() + payloadFill_, data + used, k);
  payloadFill_ += k;
  used += k;
  if (payloadFill_ == frame_.payload.size()) ready_ = true;
  return used;
}

Frame FrameParser::take() {
  Frame f = std::move(frame_);
  frame_ = Frame();
  ready_ = false;
  haveHeader_ = false;
  headerFill_ = 0;
  payloadFill_ = 0;
  return f;
}

// ---- rendezvous payloads ----

std::vector<uint8_t> encodeRegistration(const Registration& r) {
  std::vector<uint8_t> out(kRegistrationPayloadBytes);
  putU32(out.data(), static_cast<uint32_t>(r.rank));
  putU32(out.data() + 4, static_cast<uint32_t>(r.nranks));
  encodeAddress(r.endpoint, out.data() + 8);
  return out;
}

std::optional<Registration> decodeRegistration(const std::vector<uint8_t>& payload) {
  if (payload.size() != kRegistrationPayloadBytes) return std::nullopt;
  Registration r;
  r.rank = static_cast<int32_t>(getU32(payload.data()));
  r.nranks = static_cast<int32_t>(getU32(payload.data() + 4));
  r.endpoint = decodeAddress(payload.data() + 8);
  if (!r.endpoint.valid()) return std::nullopt;
  return r;
}

std::vector<uint8_t> encodeTable(const std::vector<SocketAddress>& table) {
  std::vector<uint8_t> out(table.size() * kAddressBytes);
  for (size_t i = 0; i < table.size(); ++i) encodeAddress(table[i], out.data() + i * kAddressBytes);
  return out;
}

std::optional<std::vector<SocketAddress>> decodeTable(const std::vector<uint8_t>& payload) {
  if (payload.empty() || payload.size() % kAddressBytes != 0) return std::nullopt;
  std::vector<SocketAddress> table(payload.size() / kAddressBytes);
  for (size_t i = 0; i < table.size(); ++i) {
    table[i] = decodeAddress(payload.data() + i * kAddressBytes);
    if (!table[i].valid()) return std::nullopt;
  }
  return table;
}

std::vector<uint8_t> encodeErrorPayload(Status status, const std::string& text) {
  std::string t = text.substr(0, kMaxErrorText);
  std::vector<uint8_t> out(4 + t.size());
  putU32(out.data(), static_cast<uint32_t>(status));
  memcpy(out.data() + 4, t.data(), t.size());
  return out;
}

bool decodeErrorPayload(const std::vector<uint8_t>& payload, Status* status, std::string* text) {
  if (payload.size() < 4 || payload.size() > 4 + kMaxErrorText) return false;
  uint32_t s = getU32(payload.data());
  if (s < static_cast<uint32_t>(Status::kSystemError) || s > static_cast<uint32_t>(Status::kTimeout)) return false;
  if (s == static_cast<uint32_t>(Status::kInProgress) + 1) return false;  // chorusNumResults is no status
  *status = static_cast<Status>(s);
  text->assign(reinterpret_cast<const char*>(payload.data()) + 4, payload.size() - 4);
  return true;
}

}  // namespace chorus::bootstrap
