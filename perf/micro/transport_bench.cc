// Transport microbenchmarks between two threads of one process, per transport:
//   PingPong: one-way latency of an 8-byte message (half the round trip of a ping answered by a pong)
//   Stream:   bandwidth of 1 MiB messages sent one way through 8 slots of 128 KiB
// Run: transport_bench [--benchmark_filter=shm]. Each transport instance stands for one rank's
// communicator, so the socket case runs two proxy threads, as two ranks would.
#include <benchmark/benchmark.h>

#include <unistd.h>
#include <atomic>
#include <cstring>
#include <memory>
#include <thread>

#include "base/host_id.h"
#include "base/wait.h"
#include "transport/inproc/transport.h"
#include "transport/net/transport.h"
#include "transport/shm/transport.h"

namespace chorus::transport {
namespace {

enum Kind { kInproc = 0, kShm = 1, kSocket = 2 };

std::unique_ptr<Transport> make(int kind) {
  if (kind == kInproc) return std::make_unique<inproc::InprocTransport>();
  if (kind == kShm) return std::make_unique<shm::ShmTransport>();
  return std::make_unique<net::NetTransport>();
}

WaitContext longWait() {
  WaitContext ctx;
  ctx.deadline = Deadline::afterMs(60000);
  ctx.what = "benchmark";
  return ctx;
}

// Two ranks (0 = the benchmark thread, 1 = a helper thread) with a connection each way.
struct Pair {
  Pair(int kind, int nslots, size_t slotBytes) : t0(make(kind)), t1(make(kind)) {
    PeerInfo a, b;
    a.rank = 0;
    b.rank = 1;
    a.pid = b.pid = getpid();
    a.hostHash = b.hostHash = hostHash();
    a.processId = b.processId = 1;
    auto spec = [&](const PeerInfo& self, const PeerInfo& peer) {
      ConnectSpec s;
      s.self = self;
      s.peer = peer;
      s.nslots = nslots;
      s.slotBytes = slotBytes;
      s.ctx = longWait();
      return s;
    };
    std::vector<uint8_t> d01, d10;
    recv1 = createHostRecv(*t1, spec(b, a), &d01);
    send0 = connectHostSend(*t0, spec(a, b), d01);
    recv0 = createHostRecv(*t0, spec(a, b), &d10);
    send1 = connectHostSend(*t1, spec(b, a), d10);
  }
  ~Pair() {
    send0.reset();
    send1.reset();
    recv0.reset();
    recv1.reset();
  }
  std::unique_ptr<Transport> t0, t1;
  std::unique_ptr<SendConnection> send0, send1;  // 0 -> 1, 1 -> 0
  std::unique_ptr<RecvConnection> recv0, recv1;  // 1 -> 0, 0 -> 1
};

void pingPong(benchmark::State& state) {
  Pair p(static_cast<int>(state.range(0)), 8, 4096);
  auto ctx = longWait();
  // The helper answers every ping with a pong until it receives a 0-byte slot.
  std::thread echo([&] {
    for (;;) {
      size_t n;
      const void* in = p.recv1->peek(&n, ctx);
      void* out = p.send1->acquire(ctx);
      memcpy(out, in, n);
      p.recv1->release();
      p.send1->post(n);
      if (n == 0) return;
    }
  });
  uint64_t value = 0;
  for (auto _ : state) {
    memcpy(p.send0->acquire(ctx), &value, sizeof(value));
    p.send0->post(sizeof(value));
    size_t n;
    const void* in = p.recv0->peek(&n, ctx);
    memcpy(&value, in, sizeof(value));
    p.recv0->release();
    ++value;
  }
  p.send0->acquire(ctx);
  p.send0->post(0);
  size_t n;
  p.recv0->peek(&n, ctx);
  p.recv0->release();
  echo.join();
  // Seconds per one-way trip (two per iteration), printed with an SI suffix (u = microseconds).
  state.counters["one_way"] = benchmark::Counter(static_cast<double>(state.iterations()) * 2,
                                                 benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void stream(benchmark::State& state) {
  constexpr size_t kMessage = 1 << 20;
  constexpr size_t kSlot = 128 << 10;
  Pair p(static_cast<int>(state.range(0)), 8, kSlot);
  auto ctx = longWait();
  std::atomic<bool> stop{false};
  // The helper drains slots and acknowledges every message with a 0-byte slot, so that an iteration ends
  // when its message has arrived (not just when it was handed to the transport).
  std::thread sink([&] {
    for (;;) {
      size_t got = 0;
      while (got < kMessage) {
        size_t n;
        p.recv1->peek(&n, ctx);
        p.recv1->release();
        if (n == 0) return;
        got += n;
      }
      p.send1->acquire(ctx);
      p.send1->post(0);
    }
  });
  std::vector<char> buf(kMessage, 'x');
  for (auto _ : state) {
    for (size_t off = 0; off < kMessage; off += kSlot) {
      memcpy(p.send0->acquire(ctx), buf.data() + off, kSlot);
      p.send0->post(kSlot);
    }
    size_t n;
    p.recv0->peek(&n, ctx);
    p.recv0->release();
  }
  p.send0->acquire(ctx);
  p.send0->post(0);
  sink.join();
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kMessage));
}

const char* kNames[] = {"inproc", "shm", "socket"};

void registerAll() {
  for (int k = 0; k < 3; ++k) {
    benchmark::RegisterBenchmark((std::string("PingPong8B/") + kNames[k]).c_str(), pingPong)->Arg(k)->UseRealTime();
    benchmark::RegisterBenchmark((std::string("Stream1MiB/") + kNames[k]).c_str(), stream)->Arg(k)->UseRealTime();
  }
}

}  // namespace
}  // namespace chorus::transport

int main(int argc, char** argv) {
  chorus::transport::registerAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
