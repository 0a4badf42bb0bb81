// Layout of the 128-byte chorusUniqueId (little-endian):
//   0 magic u32 "CHID" | 4 version u16 | 6 reserved u16 (0) | 8 root address (20 bytes, wire.h) |
//   28 secret (16) | 44 commHash u64 | 52..119 zero | 120 checksum u64 (FNV-1a over bytes 0..119)
// The secret travels inside the id exactly as NCCL's id carries its root address: whoever holds the id may
// join. It never crosses the wire afterwards: connections prove knowledge of it with HMACs.
#pragma once

#include <string>

#include "bootstrap/bootstrap.h"
#include "bootstrap/hmac.h"

namespace chorus::bootstrap {

constexpr uint32_t kUniqueIdMagic = 0x44494843;  // "CHID" little-endian
constexpr uint16_t kUniqueIdVersion = 1;

// Parses a hex secret (CHORUS_SECRET). 32 hex digits are the secret itself; any other length of valid hex is
// hashed into one. Throws chorusInvalidArgument on non-hex text.
Secret secretFromHex(const std::string& hex);

}  // namespace chorus::bootstrap
