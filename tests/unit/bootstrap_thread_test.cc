// The bootstrap with ranks as threads of this process (sharing its endpoint), and hostile clients talking
// to the endpoint's listener over real sockets.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "bootstrap/endpoint.h"
#include "bootstrap/unique_id.h"
#include "bootstrap/wire.h"
#include "bootstrap_test_util.h"

namespace chorus::bootstrap {
namespace {

using testing::errorOf;
using testing::exerciseCollectives;
using testing::runRanks;
using testing::testCtx;

class BootstrapThreads : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Short limits so that the hostile-client tests see drops quickly.
    EndpointLimits lim;
    lim.handshakeMs = 300;
    lim.stallMs = 500;
    lim.connectMs = 2000;
    Endpoint::setLimits(lim);
  }
};

class BootstrapRendezvous : public BootstrapThreads, public ::testing::WithParamInterface<int> {};

TEST_P(BootstrapRendezvous, AllRanksGetTheTableAndCollectivesCheckEveryByte) {
  const int n = GetParam();
  UniqueId id = createUniqueId();
  std::vector<uint64_t> hashes(n);
  auto errors = runRanks(n, [&](int r) {
    auto b = Bootstrap::init(id, r, n, testCtx());
    EXPECT_EQ(b->rank(), r);
    EXPECT_EQ(b->nranks(), n);
    hashes[r] = b->commHash();
    for (int p = 0; p < n; ++p) EXPECT_EQ(b->peerAddress(p).toString(), Endpoint::get().address().toString());
    std::string err = exerciseCollectives(*b, testCtx());
    EXPECT_EQ(err, "") << "rank " << r;
    b->checkPeers();
  });
  for (int r = 0; r < n; ++r) {
    EXPECT_FALSE(errors[r]) << errorOf(errors[r]).second;
    EXPECT_EQ(hashes[r], id.commHash);
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, BootstrapRendezvous, ::testing::Values(1, 2, 3, 5, 8));

TEST_F(BootstrapThreads, EncodedIdWorksAcrossTheCApiBoundary) {
  UniqueId created = createUniqueId();
  uint8_t bytes[kUniqueIdBytes];
  encodeUniqueId(created, bytes);
  UniqueId id = decodeUniqueId(bytes);
  auto errors = runRanks(2, [&](int r) {
    auto b = Bootstrap::init(id, r, 2, testCtx());
    b->barrier(testCtx());
  });
  for (auto& e : errors) EXPECT_FALSE(e) << errorOf(e).second;
}

TEST_F(BootstrapThreads, RanksDisagreeingOnNranksAllGetInvalidArgument) {
  UniqueId id = createUniqueId();
  auto errors = runRanks(3, [&](int r) { Bootstrap::init(id, r, r == 2 ? 4 : 3, testCtx()); });
  for (int r = 0; r < 3; ++r) {
    auto [status, msg] = errorOf(errors[r]);
    EXPECT_EQ(status, Status::kInvalidArgument) << "rank " << r << ": " << msg;
    EXPECT_NE(msg.find("nranks"), std::string::npos) << msg;
    EXPECT_NE(msg.find("rank " + std::to_string(r)), std::string::npos) << msg;
  }
}

TEST_F(BootstrapThreads, TwoRanksClaimingOneRankGetInvalidArgument) {
  UniqueId id = createUniqueId();
  auto errors = runRanks(2, [&](int) { Bootstrap::init(id, 0, 2, testCtx()); });
  for (auto& e : errors) {
    auto [status, msg] = errorOf(e);
    EXPECT_EQ(status, Status::kInvalidArgument) << msg;
    EXPECT_NE(msg.find("claim rank 0"), std::string::npos) << msg;
  }
}

TEST_F(BootstrapThreads, InvalidArgumentsAreRejectedLocally) {
  UniqueId id = createUniqueId();
  EXPECT_THROW(Bootstrap::init(id, 2, 2, testCtx()), Error);
  EXPECT_THROW(Bootstrap::init(id, 0, 0, testCtx()), Error);
}

TEST_F(BootstrapThreads, SubsetHasItsOwnHashAndWorks) {
  UniqueId id = createUniqueId();
  const std::vector<int> members = {4, 1, 3};
  auto errors = runRanks(5, [&](int r) {
    auto b = Bootstrap::init(id, r, 5, testCtx());
    bool member = std::find(members.begin(), members.end(), r) != members.end();
    if (!member) {
      EXPECT_THROW(b->subset(members, 9), Error);
      b->barrier(testCtx());
      return;
    }
    auto sub = b->subset(members, 9);
    EXPECT_NE(sub->commHash(), b->commHash());
    EXPECT_EQ(sub->nranks(), 3);
    EXPECT_EQ(members[sub->rank()], r);
    EXPECT_EQ(sub->subset({0, 1, 2}, 1)->commHash(), childCommHash(sub->commHash(), 1));
    EXPECT_EQ(exerciseCollectives(*sub, testCtx()), "");
    // The parent keeps working beside its child.
    b->barrier(testCtx());
  });
  for (auto& e : errors) EXPECT_FALSE(e) << errorOf(e).second;
}

TEST_F(BootstrapThreads, AbortFromAnotherThreadUnblocksRecvAtOnce) {
  UniqueId id = createUniqueId();
  auto errors = runRanks(2, [&](int r) {
    auto b = Bootstrap::init(id, r, 2, testCtx());
    if (r == 1) return;
    std::atomic<uint32_t> abortFlag{0};
    WaitContext ctx = testCtx();
    ctx.abort = &abortFlag;
    std::thread setter([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      abortFlag.store(1);
    });
    auto t0 = std::chrono::steady_clock::now();
    try {
      b->recv(1, 7, ctx);
      ADD_FAILURE() << "recv returned without a message";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::kInvalidUsage) << e.what();
      EXPECT_NE(std::string(e.what()).find("rank 0: bootstrap recv from rank 1 (tag 7)"), std::string::npos)
          << e.what();
    }
    setter.join();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1000));
  });
  for (auto& e : errors) EXPECT_FALSE(e) << errorOf(e).second;
}

TEST_F(BootstrapThreads, DeadlineTurnsIntoTimeout) {
  UniqueId id = createUniqueId();
  auto errors = runRanks(2, [&](int r) {
    auto b = Bootstrap::init(id, r, 2, testCtx());
    if (r == 1) return;
    auto t0 = std::chrono::steady_clock::now();
    try {
      b->recv(1, 3, testCtx(200));
      ADD_FAILURE() << "recv returned without a message";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::kTimeout) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(2000));
  });
  for (auto& e : errors) EXPECT_FALSE(e) << errorOf(e).second;
}

TEST_F(BootstrapThreads, RendezvousTimesOutWhenRanksAreMissing) {
  UniqueId id = createUniqueId();
  try {
    Bootstrap::init(id, 0, 2, testCtx(300));
    ADD_FAILURE() << "init returned without rank 1";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kTimeout) << e.what();
  }
}

TEST_F(BootstrapThreads, FixedAddressRootServesRanksWithDerivedAndHexSecrets) {
  for (std::string secretHex : {std::string(), std::string("0123456789abcdef0123456789abcdef")}) {
    int port;
    {
      Socket probe = Socket::listen(SocketAddress::loopback(0));
      port = probe.localAddress().port();
    }
    SocketAddress addr = SocketAddress::loopback(port);
    UniqueId served = serveRendezvousAt(addr, secretHex);
    auto errors = runRanks(3, [&](int r) {
      UniqueId id = r == 0 ? served : rendezvousIdFor(addr, secretHex);
      auto b = Bootstrap::init(id, r, 3, testCtx());
      EXPECT_EQ(exerciseCollectives(*b, testCtx()), "");
    });
    for (auto& e : errors) EXPECT_FALSE(e) << errorOf(e).second;
    // A rank with another secret fails authentication instead of joining.
    UniqueId wrong = rendezvousIdFor(addr, "ffffffffffffffffffffffffffffffff");
    EXPECT_THROW(Bootstrap::init(wrong, 0, 1, testCtx(3000)), Error);
  }
}

// ---- hostile clients ----

// True when the listener closes the connection within `ms`.
bool closedByPeerWithin(Socket& s, int ms) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{s.fd(), POLLIN, 0};
    if (::poll(&p, 1, 20) > 0) {
      uint8_t buf[256];
      ssize_t k = ::recv(s.fd(), buf, sizeof(buf), MSG_DONTWAIT);
      if (k == 0 || (k < 0 && errno == ECONNRESET)) return true;
    }
  }
  return false;
}

TEST_F(BootstrapThreads, HostileClientsAreDroppedWhileARealRendezvousCompletes) {
  UniqueId id = createUniqueId();
  const SocketAddress root = id.root;
  WaitContext ctx = testCtx();

  Socket garbage = Socket::connect(root, ctx);
  std::vector<uint8_t> junk(100);
  for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<uint8_t>(i * 37 + 11);
  garbage.sendAll(junk.data(), junk.size(), ctx);

  Socket oversized = Socket::connect(root, ctx);
  FrameHeader h;
  h.type = FrameType::kHello;
  h.commHash = id.commHash;
  h.length = 1ull << 40;
  uint8_t hdr[kHeaderBytes];
  encodeHeader(h, hdr);
  oversized.sendAll(hdr, sizeof(hdr), ctx);

  // Knows the public commHash but not the secret: sends HELLO, then a forged RESPONSE.
  Socket unauthenticated = Socket::connect(root, ctx);
  Secret wrong{};
  wrong[3] = 0x77;
  ClientHandshake hs(wrong, id.commHash, Purpose::kRendezvous, Endpoint::get().address(), Nonce{});
  auto hello = hs.hello();
  unauthenticated.sendAll(hello.data(), hello.size(), ctx);
  Frame challenge = Endpoint::readFrame(unauthenticated, kMaxHandshakePayload, ctx);
  std::vector<uint8_t> response;
  EXPECT_TRUE(hs.onChallenge(challenge, &response).has_value());  // the client side notices, too
  h = FrameHeader();
  h.type = FrameType::kResponse;
  h.commHash = id.commHash;
  Mac forged{};
  auto forgedFrame = encodeFrame(h, forged.data(), forged.size());
  unauthenticated.sendAll(forgedFrame.data(), forgedFrame.size(), ctx);

  Socket slow = Socket::connect(root, ctx);        // sends nothing at all
  Socket halfHeader = Socket::connect(root, ctx);  // stalls mid-frame
  halfHeader.sendAll(hello.data(), kHeaderBytes / 2, ctx);

  // A real rendezvous goes on meanwhile.
  auto errors = runRanks(3, [&](int r) {
    auto b = Bootstrap::init(id, r, 3, testCtx());
    EXPECT_EQ(exerciseCollectives(*b, testCtx()), "");
  });
  for (auto& e : errors) EXPECT_FALSE(e) << errorOf(e).second;

  EXPECT_TRUE(closedByPeerWithin(garbage, 2000)) << "garbage client";
  EXPECT_TRUE(closedByPeerWithin(oversized, 2000)) << "oversized length";
  EXPECT_TRUE(closedByPeerWithin(unauthenticated, 2000)) << "wrong secret";
  EXPECT_TRUE(closedByPeerWithin(slow, 3000)) << "silent client";
  EXPECT_TRUE(closedByPeerWithin(halfHeader, 3000)) << "stalled header";

  // And the listener still serves afterwards.
  UniqueId again = createUniqueId();
  auto errors2 = runRanks(2, [&](int r) { Bootstrap::init(again, r, 2, testCtx())->barrier(testCtx()); });
  for (auto& e : errors2) EXPECT_FALSE(e) << errorOf(e).second;
}

TEST_F(BootstrapThreads, AuthenticatedPeersAreStillBoundedAndTimed) {
  UniqueId id = createUniqueId();
  Secret secret{};
  memcpy(secret.data(), id.secret, secret.size());
  Endpoint& ep = Endpoint::get();
  WaitContext ctx = testCtx();
  FrameHeader h;
  h.type = FrameType::kData;
  h.commHash = id.commHash;
  uint8_t hdr[kHeaderBytes];

  // A frame that stops arriving mid-way is dropped after stallMs.
  Socket stalled = Endpoint::connectAuthenticated(id.root, id.commHash, secret, Purpose::kData, ep.address(), ctx);
  h.length = 1000;
  encodeHeader(h, hdr);
  stalled.sendAll(hdr, sizeof(hdr), ctx);
  stalled.sendAll("partial", 7, ctx);

  // Beyond the data cap, even an authenticated peer is cut off before anything is allocated.
  Socket huge = Endpoint::connectAuthenticated(id.root, id.commHash, secret, Purpose::kData, ep.address(), ctx);
  h.length = kMaxDataPayload + 1;
  encodeHeader(h, hdr);
  huge.sendAll(hdr, sizeof(hdr), ctx);

  // A REGISTER on a data connection is a protocol violation.
  Socket confused = Endpoint::connectAuthenticated(id.root, id.commHash, secret, Purpose::kData, ep.address(), ctx);
  h.type = FrameType::kRegister;
  auto reg = encodeRegistration(Registration{0, 1, ep.address()});
  auto frame = encodeFrame(h, reg.data(), reg.size());
  confused.sendAll(frame.data(), frame.size(), ctx);

  EXPECT_TRUE(closedByPeerWithin(huge, 1000)) << "oversized data frame";
  EXPECT_TRUE(closedByPeerWithin(confused, 1000)) << "REGISTER on a data connection";
  EXPECT_TRUE(closedByPeerWithin(stalled, 3000)) << "stalled frame";
}

// What reached the endpoint's sockets before awaitFreshRound() is in the mailbox when it returns, however late
// the service thread runs (a failed peer's notice is looked for this way once its closed connection is seen).
TEST_F(BootstrapThreads, WhatArrivedBeforeAFreshRoundIsInTheMailboxAfterIt) {
  UniqueId id = createUniqueId();
  Secret secret{};
  memcpy(secret.data(), id.secret, secret.size());
  Endpoint& ep = Endpoint::get();
  ep.registerSecret(id.commHash, secret);
  WaitContext ctx = testCtx();
  Socket s = Endpoint::connectAuthenticated(ep.address(), id.commHash, secret, Purpose::kData, ep.address(), ctx);
  FrameHeader h;
  h.type = FrameType::kData;
  h.commHash = id.commHash;
  h.src = 1;
  h.dst = 0;
  for (uint64_t tag = 1; tag <= 200; ++tag) {
    h.tag = tag;
    const uint8_t payload[3] = {1, 2, static_cast<uint8_t>(tag)};
    auto frame = encodeFrame(h, payload, sizeof(payload));
    s.sendAll(frame.data(), frame.size(), ctx);  // on loopback: in the endpoint's socket when this returns
    ASSERT_TRUE(ep.awaitFreshRound(Deadline::afterMs(10000))) << "the service thread made no round in 10 s";
    std::vector<uint8_t> got;
    ASSERT_TRUE(ep.mailbox().peek(MailKey{id.commHash, id.commHash, 0, 1, tag}, &got)) << "message " << tag;
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[2], static_cast<uint8_t>(tag));
  }
}

TEST_F(BootstrapThreads, ClientRefusesAListenerWithoutTheSecret) {
  Endpoint& ep = Endpoint::get();
  Secret listenerSecret{}, clientSecret{};
  listenerSecret[0] = 1;
  clientSecret[0] = 2;
  // A hash the listener knows with another secret: its CHALLENGE cannot verify on the client.
  const uint64_t hash = 0x5eed5eed5eed5eedull;
  ep.registerSecret(hash, listenerSecret);
  try {
    Endpoint::connectAuthenticated(ep.address(), hash, clientSecret, Purpose::kData, ep.address(), testCtx(3000));
    ADD_FAILURE() << "authenticated with a wrong secret";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kRemoteError) << e.what();
    EXPECT_NE(std::string(e.what()).find("authentication"), std::string::npos) << e.what();
  }
  // An id whose commHash does not belong to its secret is refused before any connection.
  UniqueId forged = createUniqueId();
  forged.secret[0] ^= 1;
  try {
    Bootstrap::init(forged, 0, 1, testCtx(3000));
    ADD_FAILURE() << "joined with a forged id";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("commId"), std::string::npos) << e.what();
  }
}

TEST_F(BootstrapThreads, SendAndRecvValidateArguments) {
  UniqueId id = createUniqueId();
  auto b = Bootstrap::init(id, 0, 1, testCtx());
  EXPECT_THROW(b->send(1, 0, "x", 1, testCtx()), Error);
  EXPECT_THROW(b->recv(-1, 0, testCtx()), Error);
  EXPECT_THROW(b->broadcast(nullptr, 0, 3, testCtx()), Error);
  b->send(0, 5, "hello", 5, testCtx());  // to itself, through the mailbox
  auto msg = b->recv(0, 5, testCtx());
  EXPECT_EQ(std::string(msg.begin(), msg.end()), "hello");
}

}  // namespace
}  // namespace chorus::bootstrap
