// The network plugin conformance suite (transport/net/net.h): one program, run once per plugin (CHORUS_NET or
// CHORUS_NET_PLUGIN choose it, as they do for the library). Cases: registration, sizes from 0 B to 256 MiB
// (every byte checked, and the bytes after the message untouched), ordering of many messages, tags and
// truncation, many outstanding requests in both directions, messages that arrive before their receives are
// posted, a peer that dies (a child process SIGKILLed with requests outstanding, on each side), a sender that
// closes and exits right after its sends completed (every message still arrives, a receive past them fails),
// and a deadline (a receive nobody sends to never completes, no call blocks, closing it is immediate). Prints
// one line per case; exits 0 when all pass, 1 on a failure, 77 (skipped) with the plugin's reason when it
// cannot run on this host.
//
//   net_conformance                 run every case
//   net_conformance --in-process    the plugin's network exists only inside this process (the ib plugin over
//                                   its fake verbs provider): the cases that need a peer process are skipped,
//                                   saying so
//   net_conformance --child MODE    (internal) the peer process of the peer-death and leaving cases
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/params.h"
#include "transport/net/plugin.h"

namespace {

using chorus::transport::net::loadPlugin;
using chorus::transport::net::pluginError;
using Clock = std::chrono::steady_clock;

const chorusNet_v1_t* net = nullptr;

#define CHECK(cond, ...)                                                                              \
  do {                                                                                                \
    if (!(cond))                                                                                      \
      throw std::runtime_error(                                                                       \
          chorus::detail::concat(__LINE__, ": check failed: " #cond " " __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)

void ok(chorusNetResult_t r, const char* call) {
  if (r != chorusNetSuccess) throw std::runtime_error(std::string(call) + ": " + pluginError(net, r));
}

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// One connection, both ends in this process: listen, then connect and accept alternately (both are
// non-blocking) until both comms exist.
struct Pair {
  void* send = nullptr;
  void* recv = nullptr;
  Pair() {
    alignas(8) uint8_t handle[CHORUS_NET_HANDLE_MAXSIZE] = {};
    void* listen = nullptr;
    ok(net->listen(0, handle, &listen), "listen");
    auto start = Clock::now();
    while (send == nullptr || recv == nullptr) {
      if (send == nullptr) ok(net->connect(0, handle, &send), "connect");
      if (recv == nullptr) ok(net->accept(listen, &recv), "accept");
      CHECK(since(start) < 20, "connect/accept did not finish in 20 s");
    }
    ok(net->closeListen(listen), "closeListen");
  }
  ~Pair() {
    net->closeSend(send);
    net->closeRecv(recv);
  }
};

// A registered buffer of `n` bytes (plus a guard area after it for overrun checks).
struct Buffer {
  static constexpr size_t kGuard = 4096;
  std::vector<uint8_t> bytes;
  void* mr = nullptr;
  void* comm;
  Buffer(void* c, size_t n) : bytes(n + kGuard, 0xee), comm(c) {
    ok(net->regMr(comm, bytes.data(), bytes.size(), CHORUS_PTR_HOST, &mr), "regMr");
  }
  ~Buffer() { net->deregMr(comm, mr); }
  uint8_t* data() { return bytes.data(); }
};

// Posts until the plugin gives a request (it may say "no room" with a NULL request).
void* post(bool isSend, void* comm, void* data, size_t size, int tag, void* mr) {
  auto start = Clock::now();
  for (;;) {
    void* req = nullptr;
    ok((isSend ? net->isend : net->irecv)(comm, data, size, tag, mr, &req), isSend ? "isend" : "irecv");
    if (req != nullptr) return req;
    CHECK(since(start) < 20, "no room for a request for 20 s");
  }
}

// Tests until done; returns the size; throws after `seconds`.
size_t wait(void* req, double seconds = 60) {
  auto start = Clock::now();
  for (;;) {
    int done = 0;
    size_t size = 0;
    ok(net->test(req, &done, &size), "test");
    if (done) return size;
    CHECK(since(start) < seconds, "a request did not complete in ", seconds, " s");
  }
}

// Both requests of one message, tested alternately (one thread plays both sides).
size_t waitBoth(void* sreq, void* rreq, double seconds = 120) {
  auto start = Clock::now();
  bool sdone = false, rdone = false;
  size_t got = 0;
  while (!sdone || !rdone) {
    int done = 0;
    size_t size = 0;
    if (!sdone) {
      ok(net->test(sreq, &done, &size), "test(send)");
      sdone = done != 0;
    }
    if (!rdone) {
      ok(net->test(rreq, &done, &size), "test(recv)");
      if (done) got = size, rdone = true;
    }
    CHECK(since(start) < seconds, "a message did not complete in ", seconds, " s");
  }
  return got;
}

uint8_t pattern(uint64_t seed, size_t i) {
  uint64_t x = (seed + i) * 0x9e3779b97f4a7c15ull;
  return static_cast<uint8_t>(x >> 56);
}

void fill(uint8_t* p, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; ++i) p[i] = pattern(seed, i);
}

void expectPattern(const uint8_t* p, size_t n, uint64_t seed, const char* what) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != pattern(seed, i))
      throw std::runtime_error(chorus::detail::concat(what, ": byte ", i, " of ", n, " is wrong"));
  }
}

void caseRegistration() {
  Pair p;
  std::vector<uint8_t> a(1 << 20);
  void* mr = nullptr;
  ok(net->regMr(p.send, a.data(), a.size(), CHORUS_PTR_HOST, &mr), "regMr");
  CHECK(mr != nullptr);
  ok(net->deregMr(p.send, mr), "deregMr");
  // Registering the same memory twice on both comms, and freeing in another order, is allowed.
  void *m1 = nullptr, *m2 = nullptr;
  ok(net->regMr(p.recv, a.data(), a.size(), CHORUS_PTR_HOST, &m1), "regMr");
  ok(net->regMr(p.recv, a.data(), a.size() / 2, CHORUS_PTR_HOST, &m2), "regMr");
  ok(net->deregMr(p.recv, m1), "deregMr");
  ok(net->deregMr(p.recv, m2), "deregMr");
  chorusNetProperties_v1_t props{};
  ok(net->getProperties(0, &props), "getProperties");
  CHECK(props.ptrSupport & CHORUS_PTR_HOST);
  CHECK(props.maxRequests >= 1);
  int ndev = 0;
  ok(net->devices(&ndev), "devices");
  CHECK(ndev >= 1);
}

void caseSizes() {
  Pair p;
  const size_t sizes[] = {0, 1, 3, 4095, 4096, 65535, 65537, (1u << 20) + 7, 16u << 20, 256u << 20};
  for (size_t n : sizes) {
    Buffer s(p.send, n), r(p.recv, n + 64);
    fill(s.data(), n, n);
    void* rreq = post(false, p.recv, r.data(), n + 64, 5, r.mr);  // a receive may be larger than its message
    void* sreq = post(true, p.send, s.data(), n, 5, s.mr);
    size_t got = waitBoth(sreq, rreq);
    CHECK(got == n, "size ", n, " arrived as ", got);
    expectPattern(r.data(), n, n, "payload");
    for (size_t i = n; i < n + 64 + Buffer::kGuard; ++i)
      CHECK(r.bytes[i] == 0xee, "size ", n, ": byte ", i, " past the message was written");
  }
}

void caseOrdering() {
  Pair p;
  chorusNetProperties_v1_t props{};
  ok(net->getProperties(0, &props), "getProperties");
  const int depth = std::min(props.maxRequests, 16);
  const int total = 2000;
  const size_t maxBytes = 200000;
  Buffer s(p.send, maxBytes * depth), r(p.recv, maxBytes * depth);
  std::vector<void*> sreq(depth), rreq(depth);
  int sent = 0, received = 0, sendDone = 0;
  auto sizeOf = [](int i) {
    return static_cast<size_t>((i * 7919) % 5 == 0 ? (i * 104729) % maxBytes : (i * 31) % 300);
  };
  auto start = Clock::now();
  while (received < total) {
    while (sent < total && sent - sendDone < depth && sent - received < depth) {
      int slot = sent % depth;
      rreq[slot] = post(false, p.recv, r.data() + slot * maxBytes, maxBytes, sent % 1000, r.mr);
      fill(s.data() + slot * maxBytes, sizeOf(sent), sent);
      sreq[slot] = post(true, p.send, s.data() + slot * maxBytes, sizeOf(sent), sent % 1000, s.mr);
      ++sent;
    }
    int done = 0;
    size_t size = 0;
    if (sendDone < sent) {
      ok(net->test(sreq[sendDone % depth], &done, &size), "test(send)");
      if (done) ++sendDone;
    }
    if (received < sendDone) {
      ok(net->test(rreq[received % depth], &done, &size), "test(recv)");
      if (done) {
        CHECK(size == sizeOf(received), "message ", received, " has ", size, " bytes");
        expectPattern(r.data() + (received % depth) * maxBytes, size, received, "ordered message");
        ++received;
      }
    }
    CHECK(since(start) < 120, "ordering: stuck at message ", received);
  }
}

void caseTags() {
  {
    Pair p;
    Buffer s(p.send, 64), r(p.recv, 64);
    for (int tag : {0, 1, 77, CHORUS_NET_MAX_TAG - 1}) {
      fill(s.data(), 64, tag);
      void* rreq = post(false, p.recv, r.data(), 64, tag, r.mr);
      void* sreq = post(true, p.send, s.data(), 64, tag, s.mr);
      CHECK(waitBoth(sreq, rreq) == 64);
      expectPattern(r.data(), 64, tag, "tagged message");
    }
    void* req = nullptr;
    CHECK(net->isend(p.send, s.data(), 8, CHORUS_NET_MAX_TAG, s.mr, &req) == chorusNetInvalidArgument, "tag 2^24");
    CHECK(net->isend(p.send, s.data(), 8, -1, s.mr, &req) == chorusNetInvalidArgument, "tag -1");
  }
  // A message whose tag differs from its receive's, and one larger than its receive: protocol errors.
  for (int variant = 0; variant < 2; ++variant) {
    Pair p;
    Buffer s(p.send, 256), r(p.recv, 256);
    void* rreq = post(false, p.recv, r.data(), variant == 0 ? 256 : 100, 3, r.mr);
    void* sreq = post(true, p.send, s.data(), 200, variant == 0 ? 4 : 3, s.mr);
    auto start = Clock::now();
    chorusNetResult_t res = chorusNetSuccess;
    int done = 0;
    size_t size;
    while (res == chorusNetSuccess && since(start) < 20) {
      int sd = 0;
      net->test(sreq, &sd, &size);  // the send may complete or fail; only the receive is specified
      res = net->test(rreq, &done, &size);
      CHECK(!done, variant == 0 ? "a receive took a message with another tag" : "a receive took a larger message");
    }
    CHECK(res == chorusNetProtocolError, "expected a protocol error, got ", static_cast<int>(res), ": ",
          net->lastError());
    printf("    %s: %s\n", variant == 0 ? "tag mismatch" : "truncation", net->lastError());
  }
}

void caseManyOutstanding() {
  Pair ab, ba;  // both directions at once
  chorusNetProperties_v1_t props{};
  ok(net->getProperties(0, &props), "getProperties");
  const int n = std::min(props.maxRequests, 256);
  const size_t bytes = 8192;
  Buffer s1(ab.send, bytes * n), r1(ab.recv, bytes * n), s2(ba.send, bytes * n), r2(ba.recv, bytes * n);
  std::vector<void*> reqs;
  for (int i = 0; i < n; ++i) {
    fill(s1.data() + i * bytes, bytes, i);
    fill(s2.data() + i * bytes, bytes, 1000 + i);
    reqs.push_back(post(false, ab.recv, r1.data() + i * bytes, bytes, i, r1.mr));
    reqs.push_back(post(false, ba.recv, r2.data() + i * bytes, bytes, i, r2.mr));
  }
  for (int i = 0; i < n; ++i) {
    reqs.push_back(post(true, ab.send, s1.data() + i * bytes, bytes, i, s1.mr));
    reqs.push_back(post(true, ba.send, s2.data() + i * bytes, bytes, i, s2.mr));
  }
  // With maxRequests outstanding the plugin may refuse one more, but must not fail.
  void* extra = nullptr;
  ok(net->isend(ab.send, s1.data(), 8, 0, s1.mr, &extra), "isend past maxRequests");
  CHECK(extra == nullptr || n < props.maxRequests, "maxRequests=", props.maxRequests, " but one more was accepted");
  // Test newest first: completion must not depend on the order of tests.
  std::vector<bool> done(reqs.size(), false);
  size_t left = reqs.size();
  auto start = Clock::now();
  while (left > 0) {
    for (size_t i = reqs.size(); i-- > 0;) {
      if (done[i]) continue;
      int d = 0;
      size_t size;
      ok(net->test(reqs[i], &d, &size), "test");
      if (d) done[i] = true, --left;
    }
    CHECK(since(start) < 60, left, " of ", reqs.size(), " requests outstanding after 60 s");
  }
  for (int i = 0; i < n; ++i) {
    expectPattern(r1.data() + i * bytes, bytes, i, "a->b");
    expectPattern(r2.data() + i * bytes, bytes, 1000 + i, "b->a");
  }
}

// Messages that arrive before their receives are posted (a receiver whose FIFO is full: the proxy posts a
// receive only for a free slot). A plugin may complete such a receive at once, inside irecv; its size and tag
// must still be the message's. Sizes from 0 B to past any eager limit; the messages are sent first and the
// network is progressed (through a receive on another connection that nobody sends to) before any receive
// is posted.
void caseEarlyMessages() {
  Pair p, idle;
  // The most telling first: a plugin with few requests (maxRequests) takes only the first ones.
  const size_t sizes[] = {12, (1u << 20) + 3, 0, 65537, 1, 1000, 8190};
  chorusNetProperties_v1_t props{};
  ok(net->getProperties(0, &props), "getProperties");
  const int n = std::min(static_cast<int>(std::size(sizes)), props.maxRequests);
  size_t total = 0;
  for (size_t b : sizes) total += b + 64;
  Buffer s(p.send, total), r(p.recv, total), nothing(idle.recv, 64);
  std::vector<void*> sreq(n), rreq(n);
  std::vector<size_t> at(n);
  for (int i = 0; i < n; ++i) {
    at[i] = i == 0 ? 0 : at[i - 1] + sizes[i - 1] + 64;
    fill(s.data() + at[i], sizes[i], 300 + i);
    sreq[i] = post(true, p.send, s.data() + at[i], sizes[i], 40 + i, s.mr);
  }
  // Let them arrive: test the sends that may complete alone and a receive that never completes.
  void* never = post(false, idle.recv, nothing.data(), 64, 0, nothing.mr);
  std::vector<bool> sent(n, false);
  auto start = Clock::now();
  while (since(start) < 0.3) {
    int done = 0;
    size_t size = 0;
    ok(net->test(never, &done, &size), "test(idle receive)");
    CHECK(!done, "a receive nobody sent to completed");
    for (int i = 0; i < n; ++i) {
      if (sent[i]) continue;
      ok(net->test(sreq[i], &done, &size), "test(send)");
      sent[i] = done != 0;
    }
  }
  for (int i = 0; i < n; ++i) rreq[i] = post(false, p.recv, r.data() + at[i], sizes[i] + 64, 40 + i, r.mr);
  start = Clock::now();
  std::vector<bool> got(n, false);
  for (int left = n; left > 0;) {
    for (int i = 0; i < n; ++i) {
      int done = 0;
      size_t size = 0;
      if (!sent[i]) {
        ok(net->test(sreq[i], &done, &size), "test(send)");
        sent[i] = done != 0;
      }
      if (!got[i]) {
        ok(net->test(rreq[i], &done, &size), "test(receive)");
        if (done) {
          CHECK(size == sizes[i], "an early message of ", sizes[i], " bytes was received as ", size, " bytes");
          expectPattern(r.data() + at[i], size, 300 + i, "early message");
          got[i] = true;
          --left;
        }
      }
    }
    CHECK(since(start) < 60, "early messages: ", left, " of ", n, " receives outstanding after 60 s");
  }
  for (int i = 0; i < n; ++i) {
    auto t = Clock::now();
    while (!sent[i]) {
      int done = 0;
      size_t size = 0;
      ok(net->test(sreq[i], &done, &size), "test(send)");
      sent[i] = done != 0;
      CHECK(since(t) < 20, "a send whose message was received did not complete");
    }
  }
}

// Messages of the case "a sender that leaves": how many, and their size (small: they fit the socket buffers,
// so that the sender can finish without the receiver reading).
constexpr int kLeavingMessages = 64;
constexpr size_t kLeavingBytes = 4000;

// The child of the peer-death cases: mode "send" connects to the handle on stdin, sends one message, then
// dies (SIGKILL) while its next send is outstanding; mode "recv" listens, prints the handle, accepts, receives
// one message and dies. Mode "leave" (a sender that leaves in order) connects, sends one message and waits
// for it, then sends kLeavingMessages more, waits for each to complete, closes and exits.
int child(const std::string& mode) {
  alignas(8) uint8_t handle[CHORUS_NET_HANDLE_MAXSIZE] = {};
  std::vector<uint8_t> buf(1 << 20);
  if (mode == "leave") {
    CHECK(fread(handle, 1, sizeof(handle), stdin) == sizeof(handle));
    void* comm = nullptr;
    while (comm == nullptr) ok(net->connect(0, handle, &comm), "connect");
    void* mr;
    ok(net->regMr(comm, buf.data(), buf.size(), CHORUS_PTR_HOST, &mr), "regMr");
    wait(post(true, comm, buf.data(), 100, 0, mr), 20);
    for (int i = 1; i <= kLeavingMessages; ++i) {
      uint8_t* p = buf.data() + i * kLeavingBytes;
      fill(p, kLeavingBytes, 5000 + i);
      wait(post(true, comm, p, kLeavingBytes, i, mr), 20);
    }
    ok(net->deregMr(comm, mr), "deregMr");
    ok(net->closeSend(comm), "closeSend");
    fflush(stdout);
    _exit(0);
  }
  if (mode == "send") {
    CHECK(fread(handle, 1, sizeof(handle), stdin) == sizeof(handle));
    void* comm = nullptr;
    while (comm == nullptr) ok(net->connect(0, handle, &comm), "connect");
    void* mr;
    ok(net->regMr(comm, buf.data(), buf.size(), CHORUS_PTR_HOST, &mr), "regMr");
    wait(post(true, comm, buf.data(), 1000, 0, mr));
    post(true, comm, buf.data(), buf.size(), 1, mr);
    usleep(100000);
  } else {
    void* listen;
    ok(net->listen(0, handle, &listen), "listen");
    CHECK(fwrite(handle, 1, sizeof(handle), stdout) == sizeof(handle));
    fflush(stdout);
    void* comm = nullptr;
    while (comm == nullptr) ok(net->accept(listen, &comm), "accept");
    void* mr;
    ok(net->regMr(comm, buf.data(), buf.size(), CHORUS_PTR_HOST, &mr), "regMr");
    wait(post(false, comm, buf.data(), buf.size(), 0, mr));
  }
  raise(SIGKILL);
  return 0;
}

// Runs `self --child mode` with pipes to its stdin and stdout.
struct Child {
  pid_t pid = -1;
  int in = -1, out = -1;
  Child(const char* self, const char* mode) {
    int toChild[2], fromChild[2];
    CHECK(pipe(toChild) == 0 && pipe(fromChild) == 0);
    pid = fork();
    if (pid == 0) {
      dup2(toChild[0], 0);
      dup2(fromChild[1], 1);
      execl(self, self, "--child", mode, nullptr);
      _exit(127);
    }
    close(toChild[0]);
    close(fromChild[1]);
    in = toChild[1];
    out = fromChild[0];
  }
  ~Child() {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    close(in);
    close(out);
  }
};

// Posts a request to a peer that is dying: the post itself may already report the failure (net.h: the call
// that sees one returns it). Returns the request, or nullptr when the post failed (printed).
void* postToDying(bool isSend, void* comm, void* data, size_t size, int tag, void* mr, const char* what) {
  auto start = Clock::now();
  for (;;) {
    void* req = nullptr;
    if ((isSend ? net->isend : net->irecv)(comm, data, size, tag, mr, &req) != chorusNetSuccess) {
      printf("    %s: error when posting: %s\n", what, net->lastError());
      return nullptr;
    }
    if (req != nullptr) return req;
    CHECK(since(start) < 20, "no room for a request for 20 s");
  }
}

// Waits for `req` to fail; returns the seconds it took after the child died (0 for a post that failed,
// req == nullptr). Throws if it completes.
double expectFailure(void* req, pid_t pid, const char* what) {
  CHECK(waitpid(pid, nullptr, 0) == pid);
  auto died = Clock::now();
  while (req != nullptr) {
    int done = 0;
    size_t size;
    chorusNetResult_t r = net->test(req, &done, &size);
    if (r != chorusNetSuccess) {
      printf("    %s: error after %.2f s: %s\n", what, since(died), net->lastError());
      return since(died);
    }
    CHECK(!done, what, ": a request completed although the peer died");
    CHECK(since(died) < 30, what, ": no error 30 s after the peer died");
  }
  return 0;
}

// Accepts the child process's connection on `listen` (it has 20 s to connect).
void* acceptChild(void* listen) {
  void* comm = nullptr;
  auto start = Clock::now();
  while (comm == nullptr) {
    ok(net->accept(listen, &comm), "accept");
    CHECK(since(start) < 20, "the child did not connect");
  }
  return comm;
}

void casePeerDies(const char* self) {
  {  // the sender dies: our second receive must fail
    Child c(self, "send");
    alignas(8) uint8_t handle[CHORUS_NET_HANDLE_MAXSIZE] = {};
    void* listen;
    ok(net->listen(0, handle, &listen), "listen");
    CHECK(write(c.in, handle, sizeof(handle)) == sizeof(handle));
    void* comm = acceptChild(listen);
    Buffer r(comm, 1 << 20);
    CHECK(wait(post(false, comm, r.data(), 1 << 20, 0, r.mr), 20) == 1000);
    void* req = postToDying(false, comm, r.data(), 1 << 20, 1, r.mr, "sender died");
    double s = expectFailure(req, c.pid, "sender died");
    CHECK(s < 15, "detected only after ", s, " s");
    net->closeRecv(comm);
    net->closeListen(listen);
  }
  {  // the receiver dies: our large send must fail
    Child c(self, "recv");
    alignas(8) uint8_t handle[CHORUS_NET_HANDLE_MAXSIZE] = {};
    size_t got = 0;
    while (got < sizeof(handle)) {
      ssize_t r = read(c.out, handle + got, sizeof(handle) - got);
      CHECK(r > 0, "the child printed no handle");
      got += static_cast<size_t>(r);
    }
    void* comm = nullptr;
    auto start = Clock::now();
    while (comm == nullptr) {
      ok(net->connect(0, handle, &comm), "connect");
      CHECK(since(start) < 20, "could not connect to the child");
    }
    Buffer s(comm, 64 << 20);
    wait(post(true, comm, s.data(), 1000, 0, s.mr), 20);
    void* req = postToDying(true, comm, s.data(), 64 << 20, 1, s.mr, "receiver died");  // past any socket buffer
    double t = expectFailure(req, c.pid, "receiver died");
    CHECK(t < 15, "detected only after ", t, " s");
    net->closeSend(comm);
  }
}

// A sender that leaves in order right after its sends completed (closeSend, then exit) while its messages are
// still on their way: the receiver gets every one of them, and only a receive past them fails. The receiver
// does not touch the network until the sender has exited, so that on a plugin whose sends complete before
// delivery the messages are still in flight when the end of the connection is seen.
void caseSenderLeaves(const char* self) {
  Child c(self, "leave");
  alignas(8) uint8_t handle[CHORUS_NET_HANDLE_MAXSIZE] = {};
  void* listen;
  ok(net->listen(0, handle, &listen), "listen");
  CHECK(write(c.in, handle, sizeof(handle)) == sizeof(handle));
  void* comm = acceptChild(listen);
  Buffer r(comm, (kLeavingMessages + 2) * kLeavingBytes);
  CHECK(wait(post(false, comm, r.data(), kLeavingBytes, 0, r.mr), 20) == 100);
  // Hands off until the child exits; a plugin whose sends need the receiver to progress is let go on after
  // 5 s (the case then no longer tests the race, but still every message).
  auto start = Clock::now();
  int status = 0;
  bool exited = false;
  while (!exited && since(start) < 5) {
    exited = waitpid(c.pid, &status, WNOHANG) == c.pid;
    if (!exited) usleep(1000);
  }
  if (!exited) printf("    the sender needed this side to progress: the messages were not in flight at its exit\n");
  // Receives in order, as many outstanding as the plugin takes (maxRequests).
  chorusNetProperties_v1_t props{};
  ok(net->getProperties(0, &props), "getProperties");
  std::vector<void*> reqs(kLeavingMessages + 1);
  for (int posted = 1, got = 1; got <= kLeavingMessages;) {
    while (posted <= kLeavingMessages && posted - got < props.maxRequests) {
      reqs[posted] = post(false, comm, r.data() + posted * kLeavingBytes, kLeavingBytes, posted, r.mr);
      ++posted;
    }
    CHECK(wait(reqs[got], 20) == kLeavingBytes, "message ", got, " of a sender that left arrived short");
    expectPattern(r.data() + got * kLeavingBytes, kLeavingBytes, 5000 + got, "a message of a sender that left");
    ++got;
  }
  if (!exited) CHECK(waitpid(c.pid, &status, 0) == c.pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the sender did not exit cleanly");
  // Nothing more comes: a further receive fails, when posted or soon after.
  void* extra = nullptr;
  chorusNetResult_t res = net->irecv(comm, r.data(), kLeavingBytes, kLeavingMessages + 1, r.mr, &extra);
  auto t = Clock::now();
  while (res == chorusNetSuccess) {
    int done = 0;
    size_t size;
    if (extra == nullptr) {
      res = net->irecv(comm, r.data(), kLeavingBytes, kLeavingMessages + 1, r.mr, &extra);
    } else {
      res = net->test(extra, &done, &size);
      CHECK(!done, "a receive past the last message of a sender that left completed");
    }
    CHECK(since(t) < 15, "a receive past the last message did not fail within 15 s");
  }
  printf("    %d messages after the sender left, then: %s\n", kLeavingMessages, net->lastError());
  net->closeRecv(comm);
  net->closeListen(listen);
}

void caseDeadline() {
  Pair p;
  Buffer r(p.recv, 4096);
  void* req = post(false, p.recv, r.data(), 4096, 0, r.mr);
  auto start = Clock::now();
  double longest = 0;
  while (since(start) < 0.5) {
    auto t = Clock::now();
    int done = 0;
    size_t size;
    ok(net->test(req, &done, &size), "test");
    longest = std::max(longest, since(t));
    CHECK(!done, "a receive completed with nothing sent");
  }
  // A call that waits for the network would block for the whole window; preemption on a busy host costs
  // a few tens of milliseconds at most.
  CHECK(longest < 0.4, "one test() call blocked ", longest, " s");
  auto t = Clock::now();
  ok(net->closeRecv(p.recv), "closeRecv with a receive outstanding");
  p.recv = nullptr;
  CHECK(since(t) < 1, "closeRecv took ", since(t), " s");
  printf("    longest test() %.3f ms; closeRecv %.3f ms\n", longest * 1e3, since(t) * 1e3);
}

// Sleeps on `comm`'s fds for `seconds` as the progress thread does: whenever one is ready, tests `req` (which
// must not complete: nothing was sent to it, or its receiver posted nothing) and asks for the fds again.
// Returns how often they woke. An fd that is ready while test() makes no progress wakes thousands of times (the
// thread would spin); a plugin's own traffic (UCX's wire-up of a fresh connection) a few times at most.
int wakeUps(void* comm, void* req, double seconds) {
  int wakes = 0;
  auto start = Clock::now();
  while (since(start) < seconds) {
    pollfd fds[16];
    const int nfds = net->pollFds(comm, fds, 16);
    CHECK(nfds >= 1, "a comm with a request outstanding named no fd");
    if (poll(fds, nfds, 10) <= 0) continue;
    ++wakes;
    int done = 0;
    size_t size = 0;
    ok(net->test(req, &done, &size), "test");
    CHECK(!done, "a request completed with nothing to complete it");
  }
  return wakes;
}

// pollFds, when the plugin has it: a recv comm with nothing posted names no fd; with a receive posted and no
// message sent, its fds do not stay ready (the progress thread would spin); once the message is sent they
// become ready within a second, and test() then completes the receive. A large send that its receiver has not
// asked for yet (it fills the socket, or waits for a rendezvous) names fds that do not stay ready either.
void casePollFds() {
  if (net->pollFds == nullptr) {
    printf("    pollFds: not provided (the library wakes on a timer for this plugin)\n");
    return;
  }
  Pair p;
  pollfd fds[16];
  CHECK(net->pollFds(p.recv, fds, 16) == 0, "an idle recv comm named fds to poll");
  const size_t n = 64;
  Buffer s(p.send, n), r(p.recv, n);
  fill(s.data(), n, 7);
  void* rreq = post(false, p.recv, r.data(), n, 3, r.mr);
  int done = 0;
  size_t size = 0;
  ok(net->test(rreq, &done, &size), "test");
  CHECK(!done, "a receive completed before anything was sent");
  int wakes = wakeUps(p.recv, rreq, 0.3);
  CHECK(wakes <= 3, "a receive nobody sent to woke its thread ", wakes, " times in 0.3 s");
  void* sreq = post(true, p.send, s.data(), n, 3, s.mr);
  wait(sreq);
  int nfds = net->pollFds(p.recv, fds, 16);
  CHECK(poll(fds, nfds, 1000) >= 1, "no fd became ready within 1 s of the message");
  CHECK(wait(rreq, 5) == n, "the receive did not complete after its fd was ready");
  expectPattern(r.data(), n, 7, "payload");
  // Larger than any socket buffer: the send blocks on the socket until the receiver reads.
  const size_t big = 64u << 20;
  Buffer bs(p.send, big), br(p.recv, big);
  fill(bs.data(), big, 9);
  void* bsend = post(true, p.send, bs.data(), big, 4, bs.mr);
  ok(net->test(bsend, &done, &size), "test(send)");
  CHECK(!done, "64 MiB left before a receive was posted");
  const int sendWakes = wakeUps(p.send, bsend, 0.3);
  CHECK(sendWakes <= 3, "a send waiting for its receiver woke its thread ", sendWakes, " times in 0.3 s");
  printf("    wake-ups in 0.3 s without progress: receive %d, send %d\n", wakes, sendWakes);
  void* brecv = post(false, p.recv, br.data(), big, 4, br.mr);
  CHECK(waitBoth(bsend, brecv) == big, "the 64 MiB message arrived short");
  expectPattern(br.data(), big, 9, "64 MiB payload");
}

// pollFds with messages that arrived before their receives were posted: once the first receive completed, a
// plugin may hold the next messages in memory of its own (the socket plugin reads ahead); a receive posted for
// one of them must then be named by a ready fd, or the progress thread would sleep on data it already has.
void casePollFdsEarlyMessages() {
  if (net->pollFds == nullptr) {
    printf("    pollFds: not provided\n");
    return;
  }
  Pair p;
  const int count = 4;
  const size_t n = 100;
  Buffer s(p.send, n * count), r(p.recv, n * count);
  void* sreq[count];
  bool sent[count] = {};
  for (int i = 0; i < count; ++i) {
    fill(s.data() + i * n, n, 40 + i);
    sreq[i] = post(true, p.send, s.data() + i * n, n, i, s.mr);
  }
  // A plugin that buffers (socket, UCX's eager protocol) completes these sends alone; one whose sends wait for
  // their receive (the ib plugin's clear-to-send) does not, and then no message can be early.
  auto testSends = [&] {
    for (int i = 0; i < count; ++i) {
      int done = 0;
      size_t size = 0;
      if (!sent[i]) ok(net->test(sreq[i], &done, &size), "test(send)");
      sent[i] = sent[i] || done != 0;
    }
  };
  auto start = Clock::now();
  while (since(start) < 0.3 && !std::all_of(sent, sent + count, [](bool b) { return b; })) testSends();
  const bool early = std::all_of(sent, sent + count, [](bool b) { return b; });
  if (!early) printf("    the sends wait for their receives: no message arrives early\n");
  for (int i = 0; i < count; ++i) {
    void* req = post(false, p.recv, r.data() + i * n, n, i, r.mr);
    if (early && i > 0) {
      pollfd fds[16];
      const int nfds = net->pollFds(p.recv, fds, 16);
      CHECK(nfds >= 1, "a receive posted for a message that had arrived named no fd");
      CHECK(poll(fds, nfds, 1000) >= 1, "no fd was ready for message ", i, ", which had arrived");
    }
    start = Clock::now();
    for (int done = 0; !done;) {
      size_t size = 0;
      testSends();
      ok(net->test(req, &done, &size), "test(receive)");
      CHECK(done == 0 || size == n, "message ", i, " arrived short");
      CHECK(since(start) < 60, "message ", i, " did not arrive in 60 s");
    }
    expectPattern(r.data() + i * n, n, 40 + i, "early message");
  }
  start = Clock::now();
  while (!std::all_of(sent, sent + count, [](bool b) { return b; })) {
    testSends();
    CHECK(since(start) < 20, "a send whose message was received did not complete");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string name = chorus::param::Net(), path = chorus::param::NetPlugin();
  try {
    net = loadPlugin(name, path);
  } catch (const chorus::Error& e) {
    if (e.status() == chorus::Status::kSystemError) {
      printf("SKIPPED: %s\n", e.what());
      return 77;
    }
    printf("FAILED to load: %s\n", e.what());
    return 1;
  }
  if (argc == 3 && strcmp(argv[1], "--child") == 0) return child(argv[2]);
  const bool inProcess = argc == 2 && strcmp(argv[1], "--in-process") == 0;
  signal(SIGPIPE, SIG_IGN);
  printf("network plugin %s\n", net->name);
  struct Case {
    const char* what;
    std::function<void()> run;
    bool needsPeerProcess;
  };
  const Case cases[] = {
      {"registration", caseRegistration, false},
      {"sizes 0 B - 256 MiB", caseSizes, false},
      {"ordering (2000 messages)", caseOrdering, false},
      {"tags and truncation", caseTags, false},
      {"many outstanding, both directions", caseManyOutstanding, false},
      {"messages before their receives", caseEarlyMessages, false},
      {"a peer that dies", [&] { casePeerDies(argv[0]); }, true},
      {"a sender that leaves after sending", [&] { caseSenderLeaves(argv[0]); }, true},
      {"deadline", caseDeadline, false},
      {"pollFds", casePollFds, false},
      {"pollFds, messages before receives", casePollFdsEarlyMessages, false},
  };
  int failed = 0, skipped = 0;
  for (const auto& [what, run, needsPeerProcess] : cases) {
    if (inProcess && needsPeerProcess) {
      printf("SKIP %-36s needs a peer process; the plugin's network exists only inside this one (--in-process)\n",
             what);
      ++skipped;
      continue;
    }
    auto start = Clock::now();
    try {
      run();
      printf("PASS %-36s %.2f s\n", what, since(start));
    } catch (const std::exception& e) {
      printf("FAIL %-36s %s\n", what, e.what());
      ++failed;
    }
    fflush(stdout);
  }
  printf("%s: %d of %zu cases failed, %d skipped\n", net->name, failed, std::size(cases), skipped);
  return failed == 0 ? 0 : 1;
}
