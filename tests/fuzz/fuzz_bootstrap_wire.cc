// Fuzzes the bootstrap wire parser (src/bootstrap/wire.h): what a listener does with the bytes of one
// connection, from the handshake through rendezvous and data frames, with no I/O.
//
// libFuzzer build and run (clang 14), as scripts/test.sh does it:
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCHORUS_BUILD_FUZZ=ON
//   ninja -C build-fuzz fuzz_bootstrap_wire
//   ./build-fuzz/bin/fuzz_bootstrap_wire -max_total_time=30 <work dir> tests/fuzz/corpus/fuzz_bootstrap_wire
// Any compiler: the fuzz_bootstrap_wire_replay test runs the seed corpus.
//
// Input layout: byte 0 picks the read-chunk size (partial reads), the rest is the stream a peer sends.
// The server holds one secret with fixed nonces, so the seed corpus (a valid handshake followed by frames)
// gets past authentication and lets the fuzzer mutate what follows.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "bootstrap/handshake.h"
#include "bootstrap/hmac.h"
#include "bootstrap/rendezvous.h"
#include "bootstrap/wire.h"

// tests/fuzz/CMakeLists.txt compiles wire.cc, hmac.cc and rendezvous.cc into the libFuzzer binary with the
// fuzzer's coverage instrumentation (libFuzzer is blind to code built without it); the replay test links the
// library's copies.

using namespace chorus;
using namespace chorus::bootstrap;

namespace {

// Smaller than kMaxDataPayload so that each iteration stays fast; the limit logic is the same.
constexpr uint64_t kFuzzDataCap = 1 << 20;

Secret fuzzSecret() {
  Secret s{};
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<uint8_t>(i + 1);
  return s;
}

void handlePayloads(const Frame& f, RendezvousRoot& root, int conn) {
  switch (f.header.type) {
    case FrameType::kRegister:
      if (auto r = decodeRegistration(f.payload)) root.add(conn, *r);
      break;
    case FrameType::kTable:
      if (auto t = decodeTable(f.payload)) {
        for (auto& a : *t) (void)a.toString();
      }
      break;
    case FrameType::kError: {
      Status s;
      std::string text;
      decodeErrorPayload(f.payload, &s, &text);
      break;
    }
    default: break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t chunk = 1 + data[0] % 64;
  ++data;
  --size;
  static const Secret secret = fuzzSecret();
  static const uint64_t hash = commHashOf(secret);
  Nonce serverNonce{};
  serverNonce.fill(0x5a);

  // The listener's view: handshake under the tiny cap, then frames under the data cap.
  FrameParser parser(kMaxHandshakePayload);
  ServerHandshake hs([](uint64_t h) { return h == hash ? std::optional<Secret>(secret) : std::nullopt; }, serverNonce);
  bool authed = false;
  RendezvousRoot root;
  int conn = 0;
  for (size_t off = 0; off < size && !parser.failed();) {
    size_t n = std::min(chunk, size - off);
    size_t used = parser.feed(data + off, n);
    off += used;
    if (parser.hasFrame()) {
      Frame f = parser.take();
      if (!authed) {
        std::vector<uint8_t> reply;
        std::string error;
        auto step = hs.onFrame(f, &reply, &error);
        if (step == ServerHandshake::Step::kFail) break;
        if (step == ServerHandshake::Step::kDone) {
          authed = true;
          parser.setMaxPayload(kFuzzDataCap);
        }
      } else {
        handlePayloads(f, root, ++conn % 4);
        if (conn % 5 == 0) root.lost(conn % 4);
      }
    } else if (used == 0) {
      break;
    }
  }

  // The connecting side's view of the same bytes: every frame offered as a CHALLENGE.
  ClientHandshake client(secret, hash, Purpose::kData, SocketAddress::loopback(1), serverNonce);
  FrameParser any(kFuzzDataCap);
  for (size_t off = 0; off < size && !any.failed();) {
    size_t used = any.feed(data + off, size - off);
    off += used;
    if (any.hasFrame()) {
      Frame f = any.take();
      std::vector<uint8_t> response;
      (void)client.onChallenge(f, &response);
      handlePayloads(f, root, 9);
    } else if (used == 0) {
      break;
    }
  }
  return 0;
}
