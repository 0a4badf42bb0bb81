// The TCP bound of this machine, for the socket goals of docs/performance.md: two ends joined by K loopback
// sockets, each end sending 64 MiB to the other while receiving as many (what each rank of a 2-rank ring
// all-reduce does, S bytes each way for busbw S/t), in writes of `chunk` bytes, one thread per socket and
// direction. Chorus's Socket only sets the connections up; the data moves by plain send() and recv(), TCP_NODELAY,
// the kernel's default buffers.
// Reported: bytes per second each way (bytes_per_second counts one direction).
//   socket_bound_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <utility>
#include <vector>

#include "base/socket.h"
#include "base/wait.h"

namespace {

constexpr size_t kBytesEachWay = size_t(64) << 20;

void fail(const char* what) {
  std::perror(what);
  std::abort();
}

// K connected pairs over loopback, TCP_NODELAY on both ends.
std::vector<std::pair<chorus::Socket, chorus::Socket>> connectPairs(int k) {
  const chorus::WaitContext ctx;  // never times out: loopback connects at once
  chorus::Socket listener = chorus::Socket::listen(chorus::SocketAddress::loopback(), k);
  const chorus::SocketAddress addr = listener.localAddress();
  std::vector<std::pair<chorus::Socket, chorus::Socket>> pairs;
  for (int i = 0; i < k; ++i) {
    chorus::Socket a = chorus::Socket::connect(addr, ctx);
    chorus::Socket b = listener.accept(ctx);
    a.setNoDelay();
    b.setNoDelay();
    pairs.emplace_back(std::move(a), std::move(b));
  }
  return pairs;
}

void sendAll(int fd, const char* buf, size_t chunk, size_t bytes) {
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = send(fd, buf, std::min(chunk, bytes - done), 0);
    if (n <= 0) fail("send");
    done += static_cast<size_t>(n);
  }
}

void recvAll(int fd, char* buf, size_t chunk, size_t bytes) {
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = recv(fd, buf, std::min(chunk, bytes - done), 0);
    if (n <= 0) fail("recv");
    done += static_cast<size_t>(n);
  }
}

void BM_FullDuplex(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const size_t chunk = static_cast<size_t>(state.range(1));
  const std::vector<std::pair<chorus::Socket, chorus::Socket>> pairs = connectPairs(k);
  const size_t perSocket = kBytesEachWay / static_cast<size_t>(k);
  // One buffer per thread: 4 threads per socket (each end sends and receives).
  std::vector<std::vector<char>> bufs(4 * static_cast<size_t>(k), std::vector<char>(chunk, 1));
  for (auto _ : state) {
    std::vector<std::thread> threads;
    for (int i = 0; i < k; ++i) {
      const int a = pairs[i].first.fd();
      const int b = pairs[i].second.fd();
      threads.emplace_back(sendAll, a, bufs[4 * i].data(), chunk, perSocket);
      threads.emplace_back(recvAll, b, bufs[4 * i + 1].data(), chunk, perSocket);
      threads.emplace_back(sendAll, b, bufs[4 * i + 2].data(), chunk, perSocket);
      threads.emplace_back(recvAll, a, bufs[4 * i + 3].data(), chunk, perSocket);
    }
    for (std::thread& t : threads) t.join();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kBytesEachWay));
}
BENCHMARK(BM_FullDuplex)
    ->ArgNames({"sockets", "chunk"})
    ->ArgsProduct({{1, 2, 4}, {128 << 10, 512 << 10, 2 << 20}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5);

}  // namespace
BENCHMARK_MAIN();
