// The TCP bound of this machine, for the socket goals of docs/performance.md: two ends joined by K loopback
// sockets, each end sending 64 MiB to the other while receiving as many (what each rank of a 2-rank ring
// all-reduce does, S bytes each way for busbw S/t), in writes of `chunk` bytes, one thread per socket and
// direction. No library code: plain send() and recv(), TCP_NODELAY, the kernel's default buffers.
// Reported: bytes per second each way (bytes_per_second counts one direction).
//   socket_bound_bench [--benchmark_filter=...]
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

constexpr size_t kBytesEachWay = size_t(64) << 20;

void fail(const char* what) {
  std::perror(what);
  std::abort();
}

// K connected pairs over loopback: ends[i] = {one end, the other}.
std::vector<std::pair<int, int>> connectPairs(int k) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(listener, k) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    fail("listen on loopback");
  }
  std::vector<std::pair<int, int>> pairs;
  const int one = 1;
  for (int i = 0; i < k; ++i) {
    const int a = socket(AF_INET, SOCK_STREAM, 0);
    if (a < 0 || connect(a, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) fail("connect");
    const int b = accept(listener, nullptr, nullptr);
    if (b < 0) fail("accept");
    setsockopt(a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    pairs.emplace_back(a, b);
  }
  close(listener);
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
  const std::vector<std::pair<int, int>> pairs = connectPairs(k);
  const size_t perSocket = kBytesEachWay / static_cast<size_t>(k);
  // One buffer per thread: 4 threads per socket (each end sends and receives).
  std::vector<std::vector<char>> bufs(4 * static_cast<size_t>(k), std::vector<char>(chunk, 1));
  for (auto _ : state) {
    std::vector<std::thread> threads;
    for (int i = 0; i < k; ++i) {
      const int a = pairs[i].first;
      const int b = pairs[i].second;
      threads.emplace_back(sendAll, a, bufs[4 * i].data(), chunk, perSocket);
      threads.emplace_back(recvAll, b, bufs[4 * i + 1].data(), chunk, perSocket);
      threads.emplace_back(sendAll, b, bufs[4 * i + 2].data(), chunk, perSocket);
      threads.emplace_back(recvAll, a, bufs[4 * i + 3].data(), chunk, perSocket);
    }
    for (std::thread& t : threads) t.join();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kBytesEachWay));
  for (const auto& p : pairs) {
    close(p.first);
    close(p.second);
  }
}
BENCHMARK(BM_FullDuplex)
    ->ArgNames({"sockets", "chunk"})
    ->ArgsProduct({{1, 2, 4}, {128 << 10, 512 << 10, 2 << 20}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5);

}  // namespace
BENCHMARK_MAIN();
