#include "bootstrap/handshake.h"

#include <cstring>

namespace chorus::bootstrap {
namespace {

// The bytes both MACs cover: HELLO payload, commHash, purpose and the server nonce, behind a role label.
std::vector<uint8_t> transcript(const std::vector<uint8_t>& helloPayload, uint64_t commHash, Purpose purpose,
                                const uint8_t* serverNonce) {
  std::vector<uint8_t> t(helloPayload);
  uint8_t buf[16];
  putU64(buf, commHash);
  putU64(buf + 8, static_cast<uint64_t>(purpose));
  t.insert(t.end(), buf, buf + 16);
  t.insert(t.end(), serverNonce, serverNonce + kNonceBytes);
  return t;
}

Mac roleMac(const Secret& secret, const char* role, const std::vector<uint8_t>& t) {
  std::vector<uint8_t> m(role, role + strlen(role) + 1);
  m.insert(m.end(), t.begin(), t.end());
  return hmacSha256(secret.data(), secret.size(), m.data(), m.size());
}

constexpr char kServerRole[] = "chorus-bootstrap-server";
constexpr char kClientRole[] = "chorus-bootstrap-client";

}  // namespace

ServerHandshake::Step ServerHandshake::onFrame(const Frame& f, std::vector<uint8_t>* reply, std::string* error) {
  if (done_) {
    *error = "handshake already complete";
    return Step::kFail;
  }
  if (!helloSeen_) {
    if (f.header.type != FrameType::kHello) {
      *error = std::string("expected HELLO, got ") + frameTypeName(f.header.type);
      return Step::kFail;
    }
    if (f.header.tag != static_cast<uint64_t>(Purpose::kData) &&
        f.header.tag != static_cast<uint64_t>(Purpose::kRendezvous)) {
      *error = "HELLO with unknown purpose " + std::to_string(f.header.tag);
      return Step::kFail;
    }
    if (f.payload.size() != kHelloPayloadBytes) {
      *error = "HELLO payload has the wrong size";
      return Step::kFail;
    }
    helloSeen_ = true;
    commHash_ = f.header.commHash;
    purpose_ = static_cast<Purpose>(f.header.tag);
    peerEndpoint_ = decodeAddress(f.payload.data() + kNonceBytes);
    if (!peerEndpoint_.valid()) {
      *error = "HELLO names an endpoint address of unknown family";
      return Step::kFail;
    }
    auto secret = lookup_(commHash_);
    if (!secret) {
      *error = "HELLO for unknown communicator " + hashHex(commHash_);
      return Step::kFail;
    }
    secret_ = *secret;
    transcript_ = transcript(f.payload, commHash_, purpose_, serverNonce_.data());
    Mac mac = roleMac(secret_, kServerRole, transcript_);
    uint8_t payload[kChallengePayloadBytes];
    memcpy(payload, serverNonce_.data(), kNonceBytes);
    memcpy(payload + kNonceBytes, mac.data(), kMacBytes);
    FrameHeader h;
    h.type = FrameType::kChallenge;
    h.commHash = commHash_;
    *reply = encodeFrame(h, payload, sizeof(payload));
    return Step::kContinue;
  }
  if (f.header.type != FrameType::kResponse || f.payload.size() != kResponsePayloadBytes) {
    *error = std::string("expected RESPONSE, got ") + frameTypeName(f.header.type);
    return Step::kFail;
  }
  Mac got{};
  memcpy(got.data(), f.payload.data(), kMacBytes);
  if (!macEqual(got, roleMac(secret_, kClientRole, transcript_))) {
    *error = "authentication failed (wrong secret)";
    return Step::kFail;
  }
  done_ = true;
  return Step::kDone;
}

ClientHandshake::ClientHandshake(const Secret& secret, uint64_t commHash, Purpose purpose, const SocketAddress& self,
                                 const Nonce& clientNonce)
    : secret_(secret), commHash_(commHash), purpose_(purpose), helloPayload_(kHelloPayloadBytes) {
  memcpy(helloPayload_.data(), clientNonce.data(), kNonceBytes);
  encodeAddress(self, helloPayload_.data() + kNonceBytes);
}

std::vector<uint8_t> ClientHandshake::hello() const {
  FrameHeader h;
  h.type = FrameType::kHello;
  h.commHash = commHash_;
  h.tag = static_cast<uint64_t>(purpose_);
  return encodeFrame(h, helloPayload_.data(), helloPayload_.size());
}

std::optional<std::string> ClientHandshake::onChallenge(const Frame& f, std::vector<uint8_t>* response) {
  if (f.header.type != FrameType::kChallenge || f.payload.size() != kChallengePayloadBytes) {
    return std::string("expected CHALLENGE, got ") + frameTypeName(f.header.type);
  }
  if (f.header.commHash != commHash_) return "CHALLENGE for another communicator";
  auto t = transcript(helloPayload_, commHash_, purpose_, f.payload.data());
  Mac got{};
  memcpy(got.data(), f.payload.data() + kNonceBytes, kMacBytes);
  if (!macEqual(got, roleMac(secret_, kServerRole, t))) {
    return "the listener failed authentication (it does not hold this communicator's secret)";
  }
  Mac mine = roleMac(secret_, kClientRole, t);
  FrameHeader h;
  h.type = FrameType::kResponse;
  h.commHash = commHash_;
  *response = encodeFrame(h, mine.data(), mine.size());
  return std::nullopt;
}

}  // namespace chorus::bootstrap
