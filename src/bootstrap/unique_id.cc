#include "bootstrap/unique_id.h"

#include <cstring>

#include "base/error.h"
#include "base/logging.h"
#include "bootstrap/endpoint.h"
#include "bootstrap/wire.h"

namespace chorus::bootstrap {
namespace {

constexpr size_t kChecksumOffset = kUniqueIdBytes - 8;

uint64_t fnv1a(const uint8_t* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

// Both serveRendezvousAt and rendezvousIdFor derive the same id from (addr, secretHex).
UniqueId fixedAddressId(const SocketAddress& addr, const std::string& secretHex) {
  CHORUS_CHECK_ARG(addr.valid(), "rendezvous address is invalid");
  UniqueId id;
  id.root = addr;
  Secret s = secretHex.empty() ? deriveSecret("chorus-address-secret", addr.toString()) : secretFromHex(secretHex);
  memcpy(id.secret, s.data(), s.size());
  id.commHash = commHashOf(s);
  return id;
}

Secret secretOf(const UniqueId& id) {
  Secret s{};
  memcpy(s.data(), id.secret, s.size());
  return s;
}

}  // namespace

Secret secretFromHex(const std::string& hex) {
  auto nibble = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    CHORUS_THROW(Status::kInvalidArgument, "CHORUS_SECRET must be hexadecimal, got character '", c, "'");
  };
  CHORUS_CHECK_ARG(hex.size() % 2 == 0, "CHORUS_SECRET must have an even number of hex digits, got ", hex.size());
  std::string bytes;
  for (size_t i = 0; i < hex.size(); i += 2)
    bytes.push_back(static_cast<char>(nibble(hex[i]) * 16 + nibble(hex[i + 1])));
  if (bytes.size() == kSecretBytes) {
    Secret s{};
    memcpy(s.data(), bytes.data(), s.size());
    return s;
  }
  return deriveSecret("chorus-hex-secret", bytes);
}

void encodeUniqueId(const UniqueId& id, uint8_t out[kUniqueIdBytes]) {
  memset(out, 0, kUniqueIdBytes);
  out[0] = kUniqueIdMagic & 0xff;
  out[1] = (kUniqueIdMagic >> 8) & 0xff;
  out[2] = (kUniqueIdMagic >> 16) & 0xff;
  out[3] = (kUniqueIdMagic >> 24) & 0xff;
  out[4] = kUniqueIdVersion & 0xff;
  out[5] = kUniqueIdVersion >> 8;
  encodeAddress(id.root, out + 8);
  memcpy(out + 28, id.secret, kSecretBytes);
  putU64(out + 44, id.commHash);
  putU64(out + kChecksumOffset, fnv1a(out, kChecksumOffset));
}

UniqueId decodeUniqueId(const uint8_t in[kUniqueIdBytes]) {
  uint32_t magic = static_cast<uint32_t>(in[0]) | (static_cast<uint32_t>(in[1]) << 8) |
                   (static_cast<uint32_t>(in[2]) << 16) | (static_cast<uint32_t>(in[3]) << 24);
  CHORUS_CHECK_ARG(magic == kUniqueIdMagic, "commId: not a Chorus unique id (bad magic)");
  uint16_t version = static_cast<uint16_t>(in[4] | (in[5] << 8));
  CHORUS_CHECK_ARG(version == kUniqueIdVersion, "commId: unsupported unique id version ", version, " (expected ",
                   kUniqueIdVersion, ")");
  CHORUS_CHECK_ARG(getU64(in + kChecksumOffset) == fnv1a(in, kChecksumOffset),
                   "commId: checksum mismatch (the id was corrupted or truncated)");
  bool reservedZero = in[6] == 0 && in[7] == 0;
  for (size_t i = 52; i < kChecksumOffset; ++i) reservedZero = reservedZero && in[i] == 0;
  CHORUS_CHECK_ARG(reservedZero, "commId: reserved bytes are not zero");
  UniqueId id;
  id.root = decodeAddress(in + 8);
  CHORUS_CHECK_ARG(id.root.valid(), "commId: unknown address family");
  memcpy(id.secret, in + 28, kSecretBytes);
  id.commHash = getU64(in + 44);
  CHORUS_CHECK_ARG(id.commHash == commHashOf(secretOf(id)), "commId: commHash does not match the secret");
  return id;
}

UniqueId createUniqueId() {
  Endpoint& ep = Endpoint::get();
  UniqueId id;
  randomBytes(id.secret, kSecretBytes);
  Secret s = secretOf(id);
  id.commHash = commHashOf(s);
  id.root = ep.address();
  ep.registerSecret(id.commHash, s);
  ep.serveRoot(id.commHash);
  return id;
}

UniqueId serveRendezvousAt(const SocketAddress& addr, const std::string& secretHex) {
  UniqueId id = fixedAddressId(addr, secretHex);
  Endpoint& ep = Endpoint::get();
  ep.registerSecret(id.commHash, secretOf(id));
  ep.serveRoot(id.commHash);
  ep.addListener(addr);
  CHORUS_LOG_INFO(kBootstrap, "bootstrap: serving the rendezvous at ", addr.toString());
  return id;
}

UniqueId rendezvousIdFor(const SocketAddress& addr, const std::string& secretHex) {
  return fixedAddressId(addr, secretHex);
}

}  // namespace chorus::bootstrap
