// The cryptography of the bootstrap, all from OpenSSL's libcrypto: random secrets and nonces, HMAC-SHA256 for
// the challenge-response, a constant-time compare, and the public hashes derived from secrets.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "bootstrap/bootstrap.h"

namespace chorus::bootstrap {

using Secret = std::array<uint8_t, kSecretBytes>;
constexpr size_t kMacBytes = 32;
using Mac = std::array<uint8_t, kMacBytes>;
constexpr size_t kNonceBytes = 32;
using Nonce = std::array<uint8_t, kNonceBytes>;

// Cryptographically strong random bytes (RAND_bytes); throws chorusSystemError when the generator fails.
void randomBytes(void* out, size_t n);

// HMAC-SHA256 of data under key.
Mac hmacSha256(const uint8_t* key, size_t keyLen, const void* data, size_t size);

// Compares in time independent of the contents, so a forged MAC learns nothing from timing.
bool macEqual(const Mac& a, const Mac& b);

// The public name of a communicator created from `secret`: 64 bits of SHA-256 over a label and the secret.
// It identifies the secret to a listener without revealing it.
uint64_t commHashOf(const Secret& secret);
// A commHash as 16 hex digits, for messages and logs.
std::string hashHex(uint64_t hash);
// The commHash of a child communicator (chorusCommSplit): a hash of the parent's and the split's tag.
uint64_t childCommHash(uint64_t parent, uint64_t childTag);
// 16 bytes of SHA-256 over a label and text: secrets derived from CHORUS_SECRET strings or addresses.
Secret deriveSecret(const std::string& label, const std::string& text);

}  // namespace chorus::bootstrap
