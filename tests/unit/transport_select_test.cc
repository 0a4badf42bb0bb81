// Transport selection (TransportTable, CHORUS_TRANSPORT) and transport-specific behaviour the conformance suite
// cannot express: stale descriptors, strangers on the socket listener, counters wrapping around 2^32.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>

#include <thread>

#include "base/params.h"
#include "base/socket.h"
#include "transport/socket/descriptor.h"
#include "transport/table.h"
#include "transport_harness.h"

namespace chorus::transport::testing {
namespace {

PeerInfo peer(int rank, uint64_t processId, uint64_t host) {
  PeerInfo p;
  p.rank = rank;
  p.processId = processId;
  p.hostHash = host;
  return p;
}

ConnectSpec pairSpec(const PeerInfo& self, const PeerInfo& other, int nslots = 4, size_t slotBytes = 1024) {
  ConnectSpec s;
  s.self = self;
  s.peer = other;
  s.nslots = nslots;
  s.slotBytes = slotBytes;
  s.ctx = waitFor(10000);
  return s;
}

TEST(TransportSelect, ChoosesByProcessThenHost) {
  TransportTable table("");
  PeerInfo a = peer(0, 1, 10), sameProc = peer(1, 1, 10), sameHost = peer(2, 2, 10), remote = peer(3, 3, 20);
  EXPECT_STREQ(table.select(a, sameProc).name(), "inproc");
  EXPECT_STREQ(table.select(a, sameHost).name(), "shm");
  EXPECT_STREQ(table.select(a, remote).name(), "socket");
}

// Host ranks have no device FIFOs: a device-memory connection between them is refused, naming what each
// device transport reaches.
TEST(TransportSelect, NoDeviceTransportForHostRanks) {
  TransportTable table("");
  PeerInfo a = peer(0, 1, 10), b = peer(1, 1, 10);
  try {
    table.select(a, b, FifoMemory::kDevice);
    FAIL() << "host ranks were given a device transport";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kInvalidUsage);
    EXPECT_NE(std::string(e.what()).find("no transport with device FIFOs"), std::string::npos) << e.what();
  }
}

// The table is data: a transport added before "socket" wins every pair the built-in ones before it refuse.
TEST(TransportSelect, AddedTransportJoinsInOrder) {
  class Network : public Transport {
   public:
    const char* name() const override { return "net"; }
    bool canConnect(const PeerInfo& self, const PeerInfo& peer) const override {
      return self.hostHash != peer.hostHash;
    }
    const char* reach() const override { return "ranks on different hosts"; }
    std::unique_ptr<Connection> createRecv(const ConnectSpec&, std::vector<uint8_t>*) override { return nullptr; }
    std::unique_ptr<Connection> connectSend(const ConnectSpec&, const std::vector<uint8_t>&) override {
      return nullptr;
    }
  };
  TransportTable table("");
  table.add(std::make_unique<Network>(), "socket");
  PeerInfo a = peer(0, 1, 10), sameHost = peer(1, 2, 10), remote = peer(2, 3, 20);
  EXPECT_STREQ(table.select(a, sameHost).name(), "shm");
  EXPECT_STREQ(table.select(a, remote).name(), "net");
}

TEST(TransportSelect, ForcedTransport) {
  PeerInfo a = peer(0, 1, 10), b = peer(1, 1, 10), c = peer(2, 2, 20);
  TransportTable socket("socket");
  EXPECT_STREQ(socket.select(a, b).name(), "socket");
  TransportTable inproc("inproc");
  try {
    inproc.select(a, c);
    FAIL() << "inproc across processes was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("CHORUS_TRANSPORT=inproc"), std::string::npos) << e.what();
  }
  TransportTable shm("shm");
  EXPECT_THROW(shm.select(a, c), Error);
}

TEST(TransportSelect, BadEnvironmentValue) {
  setenv("CHORUS_TRANSPORT", "carrier-pigeon", 1);
  param::reload();
  try {
    TransportTable table;
    FAIL() << "an unknown CHORUS_TRANSPORT was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("CHORUS_TRANSPORT"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("carrier-pigeon"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("inproc, shm or socket"), std::string::npos) << e.what();
  }
  setenv("CHORUS_TRANSPORT", "shm", 1);
  param::reload();
  PeerInfo a = peer(0, 1, 10), b = peer(1, 1, 10);
  EXPECT_STREQ(TransportTable().select(a, b).name(), "shm");
  unsetenv("CHORUS_TRANSPORT");
  param::reload();
}

// The table connects a pair end to end with whatever it chose (here: two "processes" on one host -> shm).
TEST(TransportSelect, ConnectsThroughTheChosenTransport) {
  TransportTable table0(""), table1("");
  PeerInfo a = peer(0, 1, hostHash()), b = peer(1, 2, hostHash());
  a.pid = b.pid = getpid();
  std::vector<uint8_t> desc;
  auto recv = createHostRecv(table1.select(b, a), pairSpec(b, a), &desc);
  auto send = connectHostSend(table0.select(a, b), pairSpec(a, b), desc);
  EXPECT_NE(recv->what().find("over shm"), std::string::npos) << recv->what();
  uint64_t v = 0x1234567890abcdefull, got = 0;
  sendMessage(*send, &v, sizeof(v), waitFor(5000));
  recvMessage(*recv, &got, sizeof(got), waitFor(5000));
  EXPECT_EQ(got, v);
}

TEST(TransportDescriptors, WrongTransportIsReported) {
  PeerInfo a = peer(0, 1, 10), b = peer(1, 1, 10);
  shm::ShmTransport shmT;
  socket::SocketTransport sockT;
  std::vector<uint8_t> desc;
  auto recv = createHostRecv(shmT, pairSpec(b, a), &desc);
  try {
    connectHostSend(sockT, pairSpec(a, b), desc);
    FAIL() << "a shm descriptor was accepted by the socket transport";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("not a socket descriptor"), std::string::npos) << e.what();
  }
  std::vector<uint8_t> truncated(desc.begin(), desc.begin() + 6);
  EXPECT_THROW(connectHostSend(shmT, pairSpec(a, b), truncated), Error);
}

TEST(TransportInproc, StaleDescriptorIsRejected) {
  inproc::InprocTransport t;
  PeerInfo a = peer(0, 1, 10), b = peer(1, 1, 10);
  std::vector<uint8_t> desc;
  createHostRecv(t, pairSpec(b, a), &desc).reset();  // the receiver is gone before the sender connects
  try {
    connectHostSend(t, pairSpec(a, b), desc);
    FAIL() << "connected to a destroyed receiver";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kInvalidUsage) << e.what();
  }
}

// Data posted before the sender goes away is delivered; the wait after it fails instead of hanging.
TEST(TransportInproc, SenderGoneAfterPosting) {
  inproc::InprocTransport t;
  PeerInfo a = peer(0, 1, 10), b = peer(1, 1, 10);
  std::vector<uint8_t> desc;
  auto recv = createHostRecv(t, pairSpec(b, a), &desc);
  auto send = connectHostSend(t, pairSpec(a, b), desc);
  uint32_t v = 7, got = 0;
  sendMessage(*send, &v, sizeof(v), waitFor(1000));
  send.reset();
  recvMessage(*recv, &got, sizeof(got), waitFor(1000));
  EXPECT_EQ(got, v);
  size_t n;
  EXPECT_THROW(recv->peek(&n, waitFor(5000)), Error);
}

// Counters are 32-bit and wrap: start them just below 2^32 and stream through the wrap.
TEST(TransportInproc, CountersWrap) {
  inproc::InprocTransport t;
  PeerInfo a = peer(0, 1, 10), b = peer(1, 1, 10);
  std::vector<uint8_t> desc;
  auto recv = createHostRecv(t, pairSpec(b, a, 4, 64), &desc);
  auto send = connectHostSend(t, pairSpec(a, b, 4, 64), desc);
  recv->fifo()->tail.store(0xfffffffbu);
  recv->fifo()->head.store(0xfffffffbu);
  std::thread producer([&] {
    for (uint32_t i = 0; i < 1000; ++i) sendMessage(*send, &i, sizeof(i), waitFor(5000));
  });
  for (uint32_t i = 0; i < 1000; ++i) {
    uint32_t got = 0;
    recvMessage(*recv, &got, sizeof(got), waitFor(5000));
    ASSERT_EQ(got, i);
  }
  producer.join();
}

// Slot indices stay continuous across the wrap only for power-of-two depths; others are refused.
TEST(TransportInproc, DepthMustBeAPowerOfTwo) {
  inproc::InprocTransport t;
  PeerInfo a = peer(0, 1, 10), b = peer(1, 1, 10);
  std::vector<uint8_t> desc;
  EXPECT_THROW(createHostRecv(t, pairSpec(b, a, 3, 64), &desc), Error);
}

// A connection to the socket listener that does not present the receiver's token is dropped, and the real
// sender still connects.
TEST(TransportSocket, StrangerIsRejected) {
  socket::SocketTransport recvT, sendT;
  PeerInfo a = peer(0, 1, 10), b = peer(1, 2, 20);
  std::vector<uint8_t> desc;
  auto recv = createHostRecv(recvT, pairSpec(b, a), &desc);
  auto d = socket::Descriptor::decode(desc);
  chorus::Socket stranger = chorus::Socket::connect(SocketAddress::parse(d.address), waitFor(5000));
  socket::Hello hello{};
  hello.magic = socket::kHelloMagic;
  hello.stream = 0;  // right stream, wrong token
  stranger.sendAll(&hello, sizeof(hello), waitFor(5000));
  char byte;
  try {
    stranger.recvAll(&byte, 1, waitFor(5000));
    FAIL() << "the stranger was sent data";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kRemoteError) << "the stranger was not dropped: " << e.what();
  }
  auto send = connectHostSend(sendT, pairSpec(a, b), desc);
  uint64_t v = 99, got = 0;
  sendMessage(*send, &v, sizeof(v), waitFor(5000));
  recvMessage(*recv, &got, sizeof(got), waitFor(5000));
  EXPECT_EQ(got, v);
}

// The chunking of a slot across streams covers it exactly once, and small slots use stream 0 alone.
TEST(TransportSocket, ChunkRangesPartitionSlots) {
  for (uint32_t n : {1u, 2u, 3u, 8u}) {
    for (uint64_t total : {0ull, 1ull, 4095ull, 65536ull, 65537ull, 1000003ull, 8388608ull}) {
      uint64_t next = 0;
      for (uint32_t s = 0; s < n; ++s) {
        uint64_t lo, hi;
        socket::chunkRange(total, n, s, &lo, &hi);
        EXPECT_EQ(lo, next);
        EXPECT_LE(lo, hi);
        next = hi;
        if (total <= socket::kMinChunk && s > 0) {
          EXPECT_EQ(lo, hi);
        }
      }
      EXPECT_EQ(next, total);
    }
  }
}

}  // namespace
}  // namespace chorus::transport::testing
