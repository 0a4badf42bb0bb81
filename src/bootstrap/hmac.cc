#include "bootstrap/hmac.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "base/error.h"

namespace chorus::bootstrap {

// The endpoint's service thread authenticates connections (HMAC) until the process is gone: OpenSSL must not
// tear itself down in an atexit handler while that thread may still use it (a peer connecting to a rank that
// is exiting crashed it). Decided at load time, before any other OpenSSL call.
[[maybe_unused]] static const bool kCryptoKeptAtExit = OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr) == 1;
namespace {

std::array<uint8_t, SHA256_DIGEST_LENGTH> sha256(const std::vector<uint8_t>& data) {
  std::array<uint8_t, SHA256_DIGEST_LENGTH> out{};
  unsigned int len = 0;
  CHORUS_ENFORCE(EVP_Digest(data.data(), data.size(), out.data(), &len, EVP_sha256(), nullptr) == 1, "SHA-256 failed");
  return out;
}

void append(std::vector<uint8_t>& v, const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  v.insert(v.end(), b, b + n);
}

void appendU64(std::vector<uint8_t>& v, uint64_t x) {
  for (int i = 0; i < 8; ++i) v.push_back(static_cast<uint8_t>(x >> (8 * i)));
}

uint64_t firstU64(const std::array<uint8_t, SHA256_DIGEST_LENGTH>& d) {
  uint64_t x = 0;
  for (int i = 0; i < 8; ++i) x |= static_cast<uint64_t>(d[i]) << (8 * i);
  return x;
}

}  // namespace

void randomBytes(void* out, size_t n) {
  if (RAND_bytes(static_cast<unsigned char*>(out), static_cast<int>(n)) != 1) {
    CHORUS_THROW(Status::kSystemError, "bootstrap: RAND_bytes failed to produce ", n, " random bytes");
  }
}

Mac hmacSha256(const uint8_t* key, size_t keyLen, const void* data, size_t size) {
  Mac out{};
  unsigned int len = 0;
  // HMAC() accepts a null data pointer only with size 0; pass a valid address either way.
  static const uint8_t kEmpty = 0;
  const auto* d = size == 0 ? &kEmpty : static_cast<const unsigned char*>(data);
  CHORUS_ENFORCE(HMAC(EVP_sha256(), key, static_cast<int>(keyLen), d, size, out.data(), &len) != nullptr,
                 "HMAC-SHA256 failed");
  CHORUS_ENFORCE_EQ(len, kMacBytes, "HMAC-SHA256 length");
  return out;
}

bool macEqual(const Mac& a, const Mac& b) {
  return CRYPTO_memcmp(a.data(), b.data(), kMacBytes) == 0;
}

uint64_t commHashOf(const Secret& secret) {
  std::vector<uint8_t> v;
  static constexpr char kLabel[] = "chorus-bootstrap-commhash";
  append(v, kLabel, sizeof(kLabel) - 1);
  append(v, secret.data(), secret.size());
  return firstU64(sha256(v));
}

uint64_t childCommHash(uint64_t parent, uint64_t childTag) {
  std::vector<uint8_t> v;
  static constexpr char kLabel[] = "chorus-bootstrap-child";
  append(v, kLabel, sizeof(kLabel) - 1);
  appendU64(v, parent);
  appendU64(v, childTag);
  return firstU64(sha256(v));
}

Secret deriveSecret(const std::string& label, const std::string& text) {
  std::vector<uint8_t> v;
  append(v, label.data(), label.size());
  v.push_back(0);  // separates label and text, so ("ab","c") and ("a","bc") differ
  append(v, text.data(), text.size());
  auto d = sha256(v);
  Secret s{};
  memcpy(s.data(), d.data(), s.size());
  return s;
}

std::string hashHex(uint64_t hash) {
  char buf[24];
  snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

}  // namespace chorus::bootstrap
