// The ib plugin's protocol over the fake verbs provider (fake_verbs.h), for what the conformance suite
// (tests/net/net_conformance.cc, run over the same fake) does not reach: device discovery and CHORUS_IB_HCA,
// striping over several QPs, the registration cache behind regMr, a peer that closes in the same process, QPs
// in the error state, the GPU flush, strangers on the setup socket. Every case ends by asking the fake whether
// it saw a misuse of the verbs API.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "net/ib/fake_verbs.h"
#include "transport/net/ib/comm.h"
#include "transport/net/ib/ib_plugin.h"
#include "transport/net/ib/plugin_state.h"

namespace chorus::netplugin::ib {
namespace {

using Clock = std::chrono::steady_clock;

chorusNetResult_t initFake(chorusNetLogger_t logger, const char* address) {
  return initWith(ibfake::fakeVerbs(), logger, address);
}

const chorusNet_v1_t& net() {
  static const chorusNet_v1_t p = makeIbPlugin("ib-fake", initFake);
  return p;
}

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

class IbFake : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ibfake::setPeermem(true);  // "GPU" memory (host memory in fact) registers, so the flush path runs
    ASSERT_EQ(net().init(nullptr, "127.0.0.1"), chorusNetSuccess) << net().lastError();
  }
  void TearDown() override {
    std::vector<std::string> v = ibfake::violations();
    for (const std::string& s : v) ADD_FAILURE() << "the fake verbs provider saw a misuse: " << s;
  }
};

// Both ends of one connection on device `dev`.
struct Pair {
  void* send = nullptr;
  void* recv = nullptr;
  explicit Pair(int dev = 0) {
    alignas(8) uint8_t handle[CHORUS_NET_HANDLE_MAXSIZE] = {};
    void* listen = nullptr;
    EXPECT_EQ(net().listen(dev, handle, &listen), chorusNetSuccess) << net().lastError();
    auto start = Clock::now();
    while ((send == nullptr || recv == nullptr) && since(start) < 20) {
      if (send == nullptr) {
        EXPECT_EQ(net().connect(dev, handle, &send), chorusNetSuccess) << net().lastError();
      }
      if (recv == nullptr) {
        EXPECT_EQ(net().accept(listen, &recv), chorusNetSuccess) << net().lastError();
      }
    }
    EXPECT_TRUE(send != nullptr && recv != nullptr) << "connect/accept did not finish in 20 s";
    net().closeListen(listen);
  }
  ~Pair() {
    if (send != nullptr) net().closeSend(send);
    if (recv != nullptr) net().closeRecv(recv);
  }
};

struct Buffer {
  std::vector<uint8_t> bytes;
  void* mr = nullptr;
  void* comm;
  Buffer(void* c, size_t n, int type = CHORUS_PTR_HOST) : bytes(n + 64, 0xee), comm(c) {
    EXPECT_EQ(net().regMr(comm, bytes.data(), bytes.size(), type, &mr), chorusNetSuccess) << net().lastError();
  }
  ~Buffer() { net().deregMr(comm, mr); }
  uint8_t* data() { return bytes.data(); }
};

void fill(uint8_t* p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>((i * 2654435761u + seed) >> 13);
}

void expectFilled(const uint8_t* p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(p[i], static_cast<uint8_t>((i * 2654435761u + seed) >> 13)) << "byte " << i << " of " << n;
  }
}

void* post(bool isSend, void* comm, void* data, size_t size, int tag, void* mr) {
  void* req = nullptr;
  EXPECT_EQ((isSend ? net().isend : net().irecv)(comm, data, size, tag, mr, &req), chorusNetSuccess)
      << net().lastError();
  EXPECT_NE(req, nullptr);
  return req;
}

// Tests both requests until both are done; returns the received size.
size_t waitBoth(void* sreq, void* rreq) {
  bool sdone = false, rdone = false;
  size_t got = 0;
  auto start = Clock::now();
  while ((!sdone || !rdone) && since(start) < 60) {
    int done = 0;
    size_t size = 0;
    if (!sdone) {
      EXPECT_EQ(net().test(sreq, &done, &size), chorusNetSuccess) << net().lastError();
      sdone = done != 0;
    }
    if (!rdone) {
      EXPECT_EQ(net().test(rreq, &done, &size), chorusNetSuccess) << net().lastError();
      if (done) got = size, rdone = true;
    }
    if (::testing::Test::HasFailure()) return 0;
  }
  EXPECT_TRUE(sdone && rdone) << "a message did not complete in 60 s";
  return got;
}

// Tests `req` until it fails; returns the error and the plugin's message. Fails if it completes.
std::pair<chorusNetResult_t, std::string> waitError(void* req, double seconds = 10) {
  auto start = Clock::now();
  while (since(start) < seconds) {
    int done = 0;
    size_t size = 0;
    chorusNetResult_t r = net().test(req, &done, &size);
    if (r != chorusNetSuccess) return {r, net().lastError()};
    EXPECT_EQ(done, 0) << "the request completed";
    if (done) break;
  }
  ADD_FAILURE() << "no error within " << seconds << " s";
  return {chorusNetSuccess, ""};
}

std::vector<uint32_t> newQps(const std::vector<uint32_t>& before) {
  std::vector<uint32_t> out;
  for (uint32_t q : ibfake::liveQps()) {
    if (std::find(before.begin(), before.end(), q) == before.end()) out.push_back(q);
  }
  return out;
}

TEST_F(IbFake, DevicesAndProperties) {
  int ndev = 0;
  ASSERT_EQ(net().devices(&ndev), chorusNetSuccess);
  ASSERT_EQ(ndev, 2);  // fake_0:1 (RoCE) and fake_1:1 (InfiniBand); fake_1:2 is down
  chorusNetProperties_v1_t p{};
  ASSERT_EQ(net().getProperties(0, &p), chorusNetSuccess);
  EXPECT_STREQ(p.name, "fake_0:1");
  EXPECT_EQ(p.port, 1);
  EXPECT_EQ(p.ptrSupport, CHORUS_PTR_HOST | CHORUS_PTR_CUDA);  // setPeermem(true)
  EXPECT_EQ(p.speed, 200000);                                  // HDR 4x
  EXPECT_EQ(p.maxRecvs, 1);
  EXPECT_EQ(p.maxRequests, kMaxRequests);
  EXPECT_EQ(p.maxMessage, kMaxMessage);
  ASSERT_EQ(net().getProperties(1, &p), chorusNetSuccess);
  EXPECT_STREQ(p.name, "fake_1:1");
  EXPECT_EQ(net().getProperties(2, &p), chorusNetInvalidArgument);
  EXPECT_EQ(ibState().ports[0].gidIndex, 3);  // RoCE v2 with an IPv4 address
  EXPECT_EQ(ibState().ports[0].linkLayer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_EQ(ibState().ports[1].gidIndex, -1);  // InfiniBand: addressed by LID
  EXPECT_EQ(ibState().ports[1].lid, 7);
}

// Discovery under CHORUS_IB_HCA and CHORUS_IB_GID_INDEX, and its failures (what init reports).
struct Discovered {
  chorusNetResult_t result;
  std::vector<IbPort> ports;
  std::string why;
};

Discovered discover(const std::string& hca, int gidIndex) {
  static std::vector<std::unique_ptr<IbContext>> contexts;  // kept open, as the plugin does
  HcaFilter filter;
  std::string why;
  EXPECT_TRUE(HcaFilter::parse(hca, &filter, &why)) << why;
  Discovered d;
  d.result = discoverPorts(
      ibfake::fakeVerbs(), filter, gidIndex, [](int, const std::string&) {}, &contexts, &d.ports, &d.why);
  return d;
}

TEST_F(IbFake, DiscoveryFollowsHcaAndGidIndex) {
  Discovered all = discover("", -1);
  ASSERT_EQ(all.result, chorusNetSuccess) << all.why;
  ASSERT_EQ(all.ports.size(), 2u);
  EXPECT_EQ(all.ports[0].name, "fake_0:1");
  EXPECT_EQ(all.ports[1].name, "fake_1:1");

  for (const char* hca : {"=fake_1", "^fake_0", "fake_1:1", "^=fake_0:1"}) {
    Discovered d = discover(hca, -1);
    ASSERT_EQ(d.result, chorusNetSuccess) << hca << ": " << d.why;
    ASSERT_EQ(d.ports.size(), 1u) << hca;
    EXPECT_EQ(d.ports[0].name, "fake_1:1") << hca;
  }
  Discovered prefix = discover("fake", -1);
  EXPECT_EQ(prefix.ports.size(), 2u);
  Discovered exactPrefix = discover("=fake", -1);
  EXPECT_EQ(exactPrefix.result, chorusNetUnavailable);

  Discovered down = discover("fake_1:2", -1);
  EXPECT_EQ(down.result, chorusNetUnavailable);
  EXPECT_NE(down.why.find("fake_1:2 (not active)"), std::string::npos) << down.why;

  Discovered gid1 = discover("fake_0", 1);
  ASSERT_EQ(gid1.result, chorusNetSuccess) << gid1.why;
  EXPECT_EQ(gid1.ports[0].gidIndex, 1);
  Discovered gid9 = discover("", 9);
  EXPECT_EQ(gid9.result, chorusNetInvalidArgument);
  EXPECT_NE(gid9.why.find("CHORUS_IB_GID_INDEX=9"), std::string::npos) << gid9.why;
}

TEST_F(IbFake, DiscoveryFailuresSayWhy) {
  ibfake::setDeviceListErrno(ENOSYS);  // what rdma-core says without kernel support, as on this machine
  Discovered nosys = discover("", -1);
  ibfake::setDeviceListErrno(0);
  EXPECT_EQ(nosys.result, chorusNetUnavailable);
  EXPECT_EQ(nosys.why, "ibv_get_device_list: Function not implemented");
  ibfake::setDevices({});
  Discovered none = discover("", -1);
  ibfake::setDevices(ibfake::defaultDevices());
  EXPECT_EQ(none.result, chorusNetUnavailable);
  EXPECT_NE(none.why.find("no RDMA device"), std::string::npos) << none.why;
}

TEST_F(IbFake, LargeMessagesStripeOverEveryQpAndSmallOnesRotate) {
  const int saved = ibState().nqps;
  ibState().nqps = 4;
  const std::vector<uint32_t> before = ibfake::liveQps();
  {
    Pair p;
    ibState().nqps = saved;
    const std::vector<uint32_t> created = newQps(before);
    ASSERT_GE(created.size(), 8u);  // the sender's 4, the receiver's 4 (and its flush QP)
    const std::vector<uint32_t> senderQps(created.begin(), created.begin() + 4);
    for (uint32_t q : senderQps) EXPECT_NE(ibfake::remoteOf(q), 0u);

    const size_t big = (4u << 20) + 3;
    Buffer s(p.send, big), r(p.recv, big + 64);
    fill(s.data(), big, 1);
    void* rreq = post(false, p.recv, r.data(), big + 64, 9, r.mr);
    void* sreq = post(true, p.send, s.data(), big, 9, s.mr);
    ASSERT_EQ(waitBoth(sreq, rreq), big);
    expectFilled(r.data(), big, 1);
    EXPECT_EQ(r.bytes[big], 0xee) << "a byte past the message was written";
    uint64_t sum = 0;
    for (uint32_t q : senderQps) {
      EXPECT_GT(ibfake::bytesWritten(q), 0u) << "QP " << q << " carried no stripe of a 4 MiB message";
      sum += ibfake::bytesWritten(q);
    }
    EXPECT_EQ(sum, big);

    // Receives smaller than a stripe use one QP each, the next one each time.
    std::vector<uint64_t> start;
    for (uint32_t q : senderQps) start.push_back(ibfake::bytesWritten(q));
    for (int i = 0; i < 8; ++i) {
      fill(s.data(), 1000, 100 + i);
      void* rr = post(false, p.recv, r.data(), 1000, i, r.mr);
      void* sr = post(true, p.send, s.data(), 1000, i, s.mr);
      ASSERT_EQ(waitBoth(sr, rr), 1000u);
      expectFilled(r.data(), 1000, 100 + i);
    }
    for (size_t i = 0; i < senderQps.size(); ++i) {
      EXPECT_EQ(ibfake::bytesWritten(senderQps[i]) - start[i], 2000u) << "QP " << i;
    }
  }
  ibState().nqps = saved;
}

TEST_F(IbFake, RegistrationCacheBehindRegMr) {
  Pair p, other(1);  // `other` is on another device
  std::vector<uint8_t> a(1 << 20);
  const ibfake::Counters c0 = ibfake::counters();  // the comms' own registrations are made by now
  void *m1 = nullptr, *m2 = nullptr, *m3 = nullptr;
  ASSERT_EQ(net().regMr(p.send, a.data(), a.size(), CHORUS_PTR_HOST, &m1), chorusNetSuccess);
  ASSERT_EQ(net().regMr(p.recv, a.data(), a.size(), CHORUS_PTR_HOST, &m2), chorusNetSuccess);
  // One device, one protection domain: one registration under both handles.
  EXPECT_EQ(static_cast<MrHandle*>(m1)->entry, static_cast<MrHandle*>(m2)->entry);
  EXPECT_EQ(static_cast<MrHandle*>(m1)->entry->refs, 2);
  EXPECT_EQ(ibfake::counters().regMr - c0.regMr, 1u);
  ASSERT_EQ(net().regMr(other.send, a.data(), a.size(), CHORUS_PTR_HOST, &m3), chorusNetSuccess);
  EXPECT_NE(static_cast<MrHandle*>(m3)->entry, static_cast<MrHandle*>(m1)->entry);
  EXPECT_EQ(ibfake::counters().regMr - c0.regMr, 2u);
  // A handle of the other device's registration does not serve this device's comm.
  void* req = nullptr;
  EXPECT_EQ(net().isend(p.send, a.data(), 8, 0, m3, &req), chorusNetInvalidArgument);
  EXPECT_NE(std::string(net().lastError()).find("not inside memory registered on fake_0:1"), std::string::npos)
      << net().lastError();
  ASSERT_EQ(net().deregMr(other.send, m3), chorusNetSuccess);
  EXPECT_EQ(ibfake::counters().deregMr - c0.deregMr, 1u);
  ASSERT_EQ(net().deregMr(p.send, m1), chorusNetSuccess);
  EXPECT_EQ(ibfake::counters().deregMr - c0.deregMr, 1u);  // still referenced by m2
  ASSERT_EQ(net().deregMr(p.recv, m2), chorusNetSuccess);
  EXPECT_EQ(ibfake::counters().deregMr - c0.deregMr, 2u);
  // A range that runs past what was registered is refused, although its page is registered.
  Buffer b(p.send, 4096);
  EXPECT_EQ(net().isend(p.send, b.data() + 100, b.bytes.size(), 0, b.mr, &req), chorusNetInvalidArgument);
  EXPECT_EQ(req, nullptr);
  EXPECT_EQ(net().isend(p.send, b.data() + 100, b.bytes.size() - 100, 0, b.mr, &req), chorusNetSuccess);
  EXPECT_NE(req, nullptr);
}

TEST_F(IbFake, SenderClosingFailsTheReceiveAtOnce) {
  Pair p;
  Buffer r(p.recv, 4096);
  void* rreq = post(false, p.recv, r.data(), 4096, 0, r.mr);
  net().closeSend(p.send);  // in one process, what the sender's death does: its QPs and socket go
  p.send = nullptr;
  auto start = Clock::now();
  auto [code, why] = waitError(rreq);
  EXPECT_EQ(code, chorusNetRemoteError);
  // Whichever comes first: the setup socket's end, or the receive's clear-to-send finding the sender's QP gone
  // (the fake reports that at once; an HCA would retry for seconds, and the socket would win).
  EXPECT_TRUE(why.find("the sender closed the connection or died") != std::string::npos ||
              why.find("the peer does not answer") != std::string::npos)
      << why;
  EXPECT_LT(since(start), 2.0);
}

TEST_F(IbFake, ReceiverClosingFailsAWaitingSend) {
  Pair p;
  const size_t n = 64u << 20;
  Buffer s(p.send, n);
  void* sreq = post(true, p.send, s.data(), n, 0, s.mr);  // waits for a clear-to-send
  net().closeRecv(p.recv);
  p.recv = nullptr;
  auto [code, why] = waitError(sreq);
  EXPECT_EQ(code, chorusNetRemoteError);
  EXPECT_NE(why.find("the receiver closed the connection or died"), std::string::npos) << why;
}

TEST_F(IbFake, QpInErrorFlushesOutstandingReceives) {
  const std::vector<uint32_t> before = ibfake::liveQps();
  Pair p;
  const std::vector<uint32_t> created = newQps(before);
  ASSERT_GE(created.size(), 4u);
  const uint32_t receiverQp = ibfake::remoteOf(created[0]);
  ASSERT_NE(receiverQp, 0u);
  Buffer r(p.recv, 4096);
  void* rreq = post(false, p.recv, r.data(), 4096, 0, r.mr);
  ibfake::moveToError(receiverQp);
  auto [code, why] = waitError(rreq);
  EXPECT_EQ(code, chorusNetRemoteError);
  EXPECT_NE(why.find("Work Request Flushed"), std::string::npos) << why;
  // After an error only close is valid, and every later call says so.
  void* again = nullptr;
  EXPECT_EQ(net().irecv(p.recv, r.data(), 16, 0, r.mr, &again), chorusNetRemoteError);
}

TEST_F(IbFake, WriteToAQpInErrorFailsTheSend) {
  const std::vector<uint32_t> before = ibfake::liveQps();
  Pair p;
  const std::vector<uint32_t> created = newQps(before);
  const int nqps = ibState().nqps;
  ASSERT_GE(created.size(), static_cast<size_t>(2 * nqps));
  Buffer s(p.send, 1 << 20), r(p.recv, 1 << 20);
  void* rreq = post(false, p.recv, r.data(), 1 << 20, 0, r.mr);  // its clear-to-send goes out now
  // Wait until the sender has the clear-to-send (its CQ holds it), then break every receiving QP.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int i = 0; i < nqps; ++i) ibfake::moveToError(ibfake::remoteOf(created[i]));
  void* sreq = post(true, p.send, s.data(), 1 << 20, 0, s.mr);
  auto [code, why] = waitError(sreq);
  EXPECT_EQ(code, chorusNetRemoteError);
  EXPECT_NE(why.find("transport retry counter exceeded"), std::string::npos) << why;
  auto [rcode, rwhy] = waitError(rreq);
  EXPECT_EQ(rcode, chorusNetRemoteError) << rwhy;
}

TEST_F(IbFake, GpuFlushReadsThroughTheHca) {
  Pair p;
  const size_t n = 100000;
  Buffer s(p.send, n), gpu(p.recv, n, CHORUS_PTR_CUDA), host(p.recv, n);
  fill(s.data(), n, 5);
  void* rreq = post(false, p.recv, gpu.data(), n, 1, gpu.mr);
  void* sreq = post(true, p.send, s.data(), n, 1, s.mr);
  ASSERT_EQ(waitBoth(sreq, rreq), n);
  expectFilled(gpu.data(), n, 5);
  const uint64_t reads = ibfake::counters().reads;
  void* freq = nullptr;
  ASSERT_EQ(net().iflush(p.recv, gpu.data(), n, gpu.mr, &freq), chorusNetSuccess) << net().lastError();
  ASSERT_NE(freq, nullptr);
  int done = 0;
  size_t size = 0;
  auto start = Clock::now();
  while (!done && since(start) < 10) ASSERT_EQ(net().test(freq, &done, &size), chorusNetSuccess) << net().lastError();
  EXPECT_EQ(done, 1);
  EXPECT_EQ(ibfake::counters().reads, reads + 1);
  // Host memory needs no flush.
  freq = &done;
  ASSERT_EQ(net().iflush(p.recv, host.data(), n, host.mr, &freq), chorusNetSuccess);
  EXPECT_EQ(freq, nullptr);
}

TEST_F(IbFake, StrangersOnTheSetupSocketAreDropped) {
  alignas(8) uint8_t handle[CHORUS_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_EQ(net().listen(0, handle, &listen), chorusNetSuccess);
  Handle h;
  memcpy(&h, handle, sizeof(h));
  sockaddr_storage ss;
  socklen_t len = h.addr.toSockaddr(&ss);
  int fd = socket(ss.ss_family, SOCK_STREAM, 0);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&ss), len), 0);
  std::vector<uint8_t> junk(sizeof(ConnInfo), 0xab);
  ASSERT_EQ(write(fd, junk.data(), junk.size()), static_cast<ssize_t>(junk.size()));
  void *send = nullptr, *recv = nullptr;
  auto start = Clock::now();
  while ((send == nullptr || recv == nullptr) && since(start) < 20) {
    if (send == nullptr) {
      ASSERT_EQ(net().connect(0, handle, &send), chorusNetSuccess) << net().lastError();
    }
    if (recv == nullptr) {
      ASSERT_EQ(net().accept(listen, &recv), chorusNetSuccess) << net().lastError();
    }
  }
  ASSERT_TRUE(send != nullptr && recv != nullptr);
  char b;
  EXPECT_EQ(read(fd, &b, 1), 0) << "the stranger's socket was not closed";
  close(fd);
  {
    Buffer s(send, 64), r(recv, 64);
    fill(s.data(), 64, 3);
    void* rreq = post(false, recv, r.data(), 64, 2, r.mr);
    void* sreq = post(true, send, s.data(), 64, 2, s.mr);
    EXPECT_EQ(waitBoth(sreq, rreq), 64u);
    expectFilled(r.data(), 64, 3);
  }
  net().closeSend(send);
  net().closeRecv(recv);
  net().closeListen(listen);
}

TEST_F(IbFake, RequestsAreCheckedAndFreedOnce) {
  Pair p;
  Buffer s(p.send, 64), r(p.recv, 64);
  void* req = nullptr;
  EXPECT_EQ(net().irecv(p.send, r.data(), 64, 0, s.mr, &req), chorusNetInvalidArgument);  // wrong direction
  EXPECT_EQ(net().isend(p.send, s.data(), 8, CHORUS_NET_MAX_TAG, s.mr, &req), chorusNetInvalidArgument);
  void* rreq = post(false, p.recv, r.data(), 64, 1, r.mr);
  void* sreq = post(true, p.send, s.data(), 64, 1, s.mr);
  ASSERT_EQ(waitBoth(sreq, rreq), 64u);
  int done = 0;
  size_t size = 0;
  EXPECT_EQ(net().test(rreq, &done, &size), chorusNetInvalidArgument);  // freed by its completing test
  // No room: the 65th outstanding receive is refused without an error, and accepted once one completes.
  std::vector<void*> reqs;
  for (int i = 0; i < kMaxRequests; ++i) reqs.push_back(post(false, p.recv, r.data(), 64, i, r.mr));
  void* extra = nullptr;
  ASSERT_EQ(net().irecv(p.recv, r.data(), 64, 0, r.mr, &extra), chorusNetSuccess);
  EXPECT_EQ(extra, nullptr);
  void* s0 = post(true, p.send, s.data(), 64, 0, s.mr);
  ASSERT_EQ(waitBoth(s0, reqs[0]), 64u);
  ASSERT_EQ(net().irecv(p.recv, r.data(), 64, kMaxRequests, r.mr, &extra), chorusNetSuccess);
  EXPECT_NE(extra, nullptr);
}

}  // namespace
}  // namespace chorus::netplugin::ib
