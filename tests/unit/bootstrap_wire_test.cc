// Pure parts of the bootstrap: the unique id's encoding, HMAC helpers, the frame parser, the handshake state
// machines and the rendezvous root's decisions. No sockets.
#include <gtest/gtest.h>

#include <cstring>

#include "base/error.h"
#include "bootstrap/handshake.h"
#include "bootstrap/hmac.h"
#include "bootstrap/rendezvous.h"
#include "bootstrap/unique_id.h"
#include "bootstrap/wire.h"

namespace chorus::bootstrap {
namespace {

UniqueId sampleId() {
  UniqueId id;
  id.root = SocketAddress::parse("10.1.2.3:4567");
  for (size_t i = 0; i < kSecretBytes; ++i) id.secret[i] = static_cast<uint8_t>(i * 11 + 5);
  Secret s{};
  memcpy(s.data(), id.secret, s.size());
  id.commHash = commHashOf(s);
  return id;
}

TEST(BootstrapUniqueId, RoundTrips) {
  UniqueId id = sampleId();
  uint8_t buf[kUniqueIdBytes];
  encodeUniqueId(id, buf);
  UniqueId back = decodeUniqueId(buf);
  EXPECT_EQ(back.root.toString(), "10.1.2.3:4567");
  EXPECT_EQ(0, memcmp(back.secret, id.secret, kSecretBytes));
  EXPECT_EQ(back.commHash, id.commHash);

  id.root = SocketAddress::parse("[::1]:99");
  encodeUniqueId(id, buf);
  EXPECT_EQ(decodeUniqueId(buf).root.toString(), "[::1]:99");
}

TEST(BootstrapUniqueId, EveryCorruptedByteIsRejectedNamingCommId) {
  uint8_t good[kUniqueIdBytes];
  encodeUniqueId(sampleId(), good);
  for (size_t i = 0; i < kUniqueIdBytes; ++i) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}}) {
      uint8_t bad[kUniqueIdBytes];
      memcpy(bad, good, sizeof(bad));
      bad[i] ^= flip;
      try {
        decodeUniqueId(bad);
        ADD_FAILURE() << "corruption of byte " << i << " was accepted";
      } catch (const Error& e) {
        EXPECT_EQ(e.status(), Status::kInvalidArgument);
        EXPECT_NE(std::string(e.what()).find("commId"), std::string::npos) << e.what();
      }
    }
  }
}

TEST(BootstrapUniqueId, ForeignIdsAreRejected) {
  uint8_t zeros[kUniqueIdBytes] = {};
  EXPECT_THROW(decodeUniqueId(zeros), Error);
  // A well-formed checksum over an unknown address family is still foreign.
  uint8_t buf[kUniqueIdBytes];
  UniqueId id = sampleId();
  id.root = SocketAddress();
  encodeUniqueId(id, buf);
  try {
    decodeUniqueId(buf);
    ADD_FAILURE() << "an id without an address was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("address family"), std::string::npos) << e.what();
  }
}

TEST(BootstrapUniqueId, FixedAddressIdsAgreeAndSecretsDiffer) {
  auto addr = SocketAddress::parse("127.0.0.1:29500");
  UniqueId a = rendezvousIdFor(addr, "");
  UniqueId b = rendezvousIdFor(addr, "");
  EXPECT_EQ(a.commHash, b.commHash);
  UniqueId c = rendezvousIdFor(addr, "00112233445566778899aabbccddeeff");
  EXPECT_NE(a.commHash, c.commHash);
  EXPECT_EQ(c.secret[0], 0x00);
  EXPECT_EQ(c.secret[15], 0xff);
  UniqueId d = rendezvousIdFor(addr, "abcd");  // other lengths are hashed into a secret
  EXPECT_NE(d.commHash, c.commHash);
  EXPECT_THROW(rendezvousIdFor(addr, "xyz0"), Error);
  EXPECT_THROW(rendezvousIdFor(addr, "abc"), Error);
}

TEST(BootstrapHmac, KnownVectorAndCompare) {
  // RFC 4231 test case 2.
  const char* key = "Jefe";
  const char* data = "what do ya want for nothing?";
  Mac m = hmacSha256(reinterpret_cast<const uint8_t*>(key), 4, data, strlen(data));
  const uint8_t expect[4] = {0x5b, 0xdc, 0xc1, 0x46};
  EXPECT_EQ(0, memcmp(m.data(), expect, 4));
  Mac other = m;
  EXPECT_TRUE(macEqual(m, other));
  other[31] ^= 1;
  EXPECT_FALSE(macEqual(m, other));
  EXPECT_NE(childCommHash(1, 2), childCommHash(1, 3));
  EXPECT_NE(childCommHash(1, 2), childCommHash(2, 2));
}

std::vector<uint8_t> dataFrame(uint64_t tag, size_t size) {
  std::vector<uint8_t> payload(size);
  for (size_t i = 0; i < size; ++i) payload[i] = static_cast<uint8_t>(i * 3 + tag);
  FrameHeader h;
  h.type = FrameType::kData;
  h.commHash = 42;
  h.src = 1;
  h.dst = 2;
  h.tag = tag;
  return encodeFrame(h, payload.data(), payload.size());
}

TEST(BootstrapWire, ParserHandlesPartialReadsByteByByte) {
  std::vector<uint8_t> stream;
  for (uint64_t tag = 0; tag < 3; ++tag) {
    auto f = dataFrame(tag, tag * 50);
    stream.insert(stream.end(), f.begin(), f.end());
  }
  FrameParser p(kMaxDataPayload);
  std::vector<Frame> frames;
  for (uint8_t byte : stream) {
    size_t used = p.feed(&byte, 1);
    ASSERT_EQ(used, 1u);
    ASSERT_FALSE(p.failed()) << p.error();
    if (p.hasFrame()) frames.push_back(p.take());
  }
  ASSERT_EQ(frames.size(), 3u);
  for (uint64_t tag = 0; tag < 3; ++tag) {
    EXPECT_EQ(frames[tag].header.tag, tag);
    EXPECT_EQ(frames[tag].header.src, 1);
    EXPECT_EQ(frames[tag].header.dst, 2);
    ASSERT_EQ(frames[tag].payload.size(), tag * 50);
    for (size_t i = 0; i < tag * 50; ++i) EXPECT_EQ(frames[tag].payload[i], static_cast<uint8_t>(i * 3 + tag));
  }
  EXPECT_FALSE(p.midFrame());
}

TEST(BootstrapWire, OversizedLengthIsRejectedBeforeAllocation) {
  FrameHeader h;
  h.type = FrameType::kData;
  h.length = 1ull << 40;
  uint8_t hdr[kHeaderBytes];
  encodeHeader(h, hdr);
  FrameParser p(kMaxDataPayload);
  p.feed(hdr, sizeof(hdr));
  EXPECT_TRUE(p.failed());
  EXPECT_NE(p.error().find("exceeds the limit"), std::string::npos) << p.error();
  // Before authentication the cap is tiny: a 1 KiB DATA frame is already too much.
  h.length = 1024;
  encodeHeader(h, hdr);
  FrameParser q(kMaxHandshakePayload);
  q.feed(hdr, sizeof(hdr));
  EXPECT_TRUE(q.failed());
}

TEST(BootstrapWire, MalformedHeadersAreRejected) {
  auto good = dataFrame(1, 4);
  auto expectBad = [&](size_t offset, uint8_t value) {
    auto bad = good;
    bad[offset] = value;
    FrameParser p(kMaxDataPayload);
    p.feed(bad.data(), bad.size());
    EXPECT_TRUE(p.failed()) << "offset " << offset;
  };
  expectBad(0, 'X');  // magic
  expectBad(4, 9);    // version
  expectBad(5, 0);    // type
  expectBad(5, 200);  // type
  expectBad(6, 1);    // reserved
  // A HELLO must have exactly its size.
  FrameHeader h;
  h.type = FrameType::kHello;
  auto hello = encodeFrame(h, "abc", 3);
  FrameParser p(kMaxHandshakePayload);
  p.feed(hello.data(), hello.size());
  EXPECT_TRUE(p.failed());
}

TEST(BootstrapWire, AddressesRoundTrip) {
  for (const char* text : {"1.2.3.4:5", "[fe80::1]:65535", "127.0.0.1:0"}) {
    uint8_t buf[kAddressBytes];
    encodeAddress(SocketAddress::parse(text), buf);
    EXPECT_EQ(decodeAddress(buf).toString(), text);
  }
  uint8_t junk[kAddressBytes] = {9};
  EXPECT_FALSE(decodeAddress(junk).valid());
}

// Runs a handshake through the two state machines; returns the server's verdict.
ServerHandshake::Step handshake(const Secret& clientSecret, const Secret& serverSecret, std::string* error) {
  uint64_t hash = commHashOf(serverSecret);
  Nonce cn{}, sn{};
  cn[0] = 1;
  sn[0] = 2;
  ServerHandshake server(
      [&](uint64_t h) -> std::optional<Secret> { return h == hash ? std::optional(serverSecret) : std::nullopt; }, sn);
  ClientHandshake client(clientSecret, hash, Purpose::kData, SocketAddress::parse("10.0.0.7:1234"), cn);
  auto parse = [](const std::vector<uint8_t>& bytes) {
    FrameParser p(kMaxHandshakePayload);
    p.feed(bytes.data(), bytes.size());
    EXPECT_TRUE(p.hasFrame());
    return p.take();
  };
  std::vector<uint8_t> challenge;
  auto step = server.onFrame(parse(client.hello()), &challenge, error);
  EXPECT_EQ(step, ServerHandshake::Step::kContinue) << *error;
  EXPECT_EQ(server.peerEndpoint().toString(), "10.0.0.7:1234");
  std::vector<uint8_t> response;
  if (auto err = client.onChallenge(parse(challenge), &response)) {
    *error = *err;
    // The client refuses a listener without the secret; forge an answer to see the server refuse it too.
    FrameHeader h;
    h.type = FrameType::kResponse;
    Mac forged{};
    response = encodeFrame(h, forged.data(), forged.size());
  }
  return server.onFrame(parse(response), &challenge, error);
}

TEST(BootstrapWire, HandshakeSucceedsWithTheSecretAndFailsWithout) {
  Secret a{}, b{};
  a[0] = 1;
  b[0] = 2;
  std::string error;
  EXPECT_EQ(handshake(a, a, &error), ServerHandshake::Step::kDone) << error;
  EXPECT_EQ(handshake(b, a, &error), ServerHandshake::Step::kFail);
  EXPECT_NE(error.find("wrong secret"), std::string::npos) << error;
}

TEST(BootstrapWire, HandshakeRejectsUnknownCommunicatorAndWrongOrder) {
  Nonce sn{};
  ServerHandshake server([](uint64_t) { return std::optional<Secret>(); }, sn);
  ClientHandshake client(Secret{}, 7, Purpose::kRendezvous, SocketAddress::loopback(1), sn);
  FrameParser p(kMaxHandshakePayload);
  auto hello = client.hello();
  p.feed(hello.data(), hello.size());
  std::vector<uint8_t> reply;
  std::string error;
  EXPECT_EQ(server.onFrame(p.take(), &reply, &error), ServerHandshake::Step::kFail);
  EXPECT_NE(error.find("unknown communicator"), std::string::npos);

  ServerHandshake server2([](uint64_t) { return std::optional<Secret>(Secret{}); }, sn);
  Frame data;
  data.header.type = FrameType::kData;
  EXPECT_EQ(server2.onFrame(data, &reply, &error), ServerHandshake::Step::kFail);
}

Registration reg(int rank, int nranks, int port) {
  return Registration{rank, nranks, SocketAddress::loopback(port)};
}

TEST(BootstrapRendezvousRoot, CompletesWithATableByRank) {
  RendezvousRoot root;
  EXPECT_EQ(root.add(10, reg(2, 3, 1002)), RendezvousRoot::Result::kWaiting);
  EXPECT_EQ(root.add(11, reg(0, 3, 1000)), RendezvousRoot::Result::kWaiting);
  EXPECT_EQ(root.add(12, reg(1, 3, 1001)), RendezvousRoot::Result::kComplete);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(root.table()[r].port(), 1000 + r);
}

TEST(BootstrapRendezvousRoot, DisagreementDuplicatesAndLossFail) {
  RendezvousRoot a;
  a.add(1, reg(0, 3, 1));
  EXPECT_EQ(a.add(2, reg(1, 4, 2)), RendezvousRoot::Result::kFailed);
  EXPECT_EQ(a.status(), Status::kInvalidArgument);
  EXPECT_NE(a.error().find("nranks"), std::string::npos);
  EXPECT_EQ(a.members().size(), 2u);  // both get the error
  EXPECT_EQ(a.add(3, reg(2, 3, 3)), RendezvousRoot::Result::kFailed);

  RendezvousRoot b;
  b.add(1, reg(1, 2, 1));
  EXPECT_EQ(b.add(2, reg(1, 2, 2)), RendezvousRoot::Result::kFailed);
  EXPECT_NE(b.error().find("rank 1"), std::string::npos);

  RendezvousRoot c;
  EXPECT_EQ(c.add(1, reg(5, 2, 1)), RendezvousRoot::Result::kFailed);

  // A claimed nranks far beyond what a table frame can carry fails without allocating for it.
  RendezvousRoot huge;
  EXPECT_EQ(huge.add(1, reg(0, INT32_MAX, 1)), RendezvousRoot::Result::kFailed);
  EXPECT_EQ(huge.status(), Status::kInvalidArgument);

  RendezvousRoot d;
  d.add(1, reg(0, 3, 1));
  d.add(2, reg(1, 3, 2));
  EXPECT_EQ(d.lost(2), RendezvousRoot::Result::kFailed);
  EXPECT_EQ(d.status(), Status::kRemoteError);
  EXPECT_EQ(d.members().size(), 1u);
}

TEST(BootstrapWire, RendezvousPayloadsRoundTrip) {
  auto r = decodeRegistration(encodeRegistration(reg(3, 8, 777)));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->rank, 3);
  EXPECT_EQ(r->nranks, 8);
  EXPECT_EQ(r->endpoint.port(), 777);
  auto t = decodeTable(encodeTable({SocketAddress::loopback(1), SocketAddress::parse("[::1]:2")}));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ((*t)[1].toString(), "[::1]:2");
  Status s;
  std::string text;
  ASSERT_TRUE(decodeErrorPayload(encodeErrorPayload(Status::kInvalidArgument, "boom"), &s, &text));
  EXPECT_EQ(s, Status::kInvalidArgument);
  EXPECT_EQ(text, "boom");
  EXPECT_FALSE(decodeErrorPayload(std::vector<uint8_t>{0, 0, 0, 0}, &s, &text));  // "success" is no error
}

}  // namespace
}  // namespace chorus::bootstrap
