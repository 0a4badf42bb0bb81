// The bootstrap's connection handshake: both halves as pure state machines over frames (wire.h), with no I/O,
// so that tests and the fuzzer drive them directly; the endpoint (endpoint.h) moves their bytes.
//
// Handshake (mutual HMAC-SHA256 challenge-response; the secret never crosses the wire):
//   client -> server  HELLO     header.commHash = the communicator that authenticates the connection,
//                               header.tag = purpose (data or rendezvous); payload: client nonce, client's
//                               endpoint address
//   server -> client  CHALLENGE server nonce, HMAC(secret, "server" | HELLO payload | commHash | purpose | nonce)
//   client -> server  RESPONSE  HMAC(secret, "client" | same transcript)
// Both MACs cover both nonces, so neither side's answer can be replayed; the role labels stop reflection.
// The client checks the server's MAC before it answers, so it never talks to a listener that lacks the secret.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/socket.h"
#include "bootstrap/hmac.h"
#include "bootstrap/wire.h"

namespace chorus::bootstrap {

// The listener's half of the handshake. lookup(commHash) returns the registered secret or nullopt.
class ServerHandshake {
 public:
  using SecretLookup = std::function<std::optional<Secret>(uint64_t commHash)>;
  ServerHandshake(SecretLookup lookup, const Nonce& serverNonce)
      : lookup_(std::move(lookup)), serverNonce_(serverNonce) {}

  enum class Step { kContinue, kDone, kFail };
  // Consumes one frame. kContinue with *reply set: send it and wait for the next frame. kDone: authenticated.
  // kFail: *error says why; drop the connection.
  Step onFrame(const Frame& f, std::vector<uint8_t>* reply, std::string* error);

  bool helloSeen() const { return helloSeen_; }
  uint64_t commHash() const { return commHash_; }
  Purpose purpose() const { return purpose_; }
  // The client's endpoint address as stated in HELLO (authenticated once kDone).
  const SocketAddress& peerEndpoint() const { return peerEndpoint_; }

 private:
  SecretLookup lookup_;
  Nonce serverNonce_;
  bool helloSeen_ = false;
  bool done_ = false;
  uint64_t commHash_ = 0;
  Purpose purpose_ = Purpose::kData;
  Secret secret_{};
  std::vector<uint8_t> transcript_;
  SocketAddress peerEndpoint_;
};

// The connecting half.
class ClientHandshake {
 public:
  ClientHandshake(const Secret& secret, uint64_t commHash, Purpose purpose, const SocketAddress& self,
                  const Nonce& clientNonce);
  // The HELLO frame to send first.
  std::vector<uint8_t> hello() const;
  // Checks the server's CHALLENGE; on success sets *response to the RESPONSE frame and returns nullopt,
  // otherwise returns why it failed.
  std::optional<std::string> onChallenge(const Frame& f, std::vector<uint8_t>* response);

 private:
  Secret secret_;
  uint64_t commHash_;
  Purpose purpose_;
  std::vector<uint8_t> helloPayload_;
};

}  // namespace chorus::bootstrap
