// A warm call allocates nothing: once a communicator has run an operation of a given shape, the same operation
// again (blocking, on a host stream with its synchronize, or in a group) takes no memory from the heap on the
// calling thread. Small messages are dominated by per-call costs, and an allocation is the largest of them (a
// malloc/free pair cost more than the whole data exchange of an 8-byte all-reduce).
//
// The test replaces the global operator new, which the library's containers reach, and counts calls per thread.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "chorus/chorus.h"

namespace {
thread_local int64_t tAllocations = 0;

void* countedAlloc(std::size_t n, std::size_t align) {
  ++tAllocations;
  if (n == 0) n = 1;
  void* p =
      align > alignof(std::max_align_t) ? std::aligned_alloc(align, (n + align - 1) / align * align) : std::malloc(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t n) {
  return countedAlloc(n, 0);
}
void* operator new[](std::size_t n) {
  return countedAlloc(n, 0);
}
void* operator new(std::size_t n, std::align_val_t a) {
  return countedAlloc(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return countedAlloc(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  ++tAllocations;
  return std::malloc(n == 0 ? 1 : n);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}

namespace {

constexpr int kWarm = 20;
constexpr int kCounted = 200;

// One operation of rank r on its communicator; `stream` is NULL (blocking) or a host stream.
using Call = chorusResult_t (*)(int r, int n, chorusComm_t comm, chorusStream_t stream, float* send, float* recv);

// Runs `call` kWarm times, then kCounted times while counting this thread's allocations, on n ranks as threads;
// returns the largest count of any rank (-1 when a call failed).
int64_t countWarmAllocations(int n, bool onStream, Call call) {
  std::vector<chorusComm_t> comms(static_cast<size_t>(n));
  EXPECT_EQ(chorusCommInitAll(comms.data(), n, nullptr), chorusSuccess);
  std::vector<int64_t> counts(static_cast<size_t>(n), -1);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      chorusComm_t comm = comms[static_cast<size_t>(r)];
      chorusStream_t stream = nullptr;
      if (onStream) {
        ASSERT_EQ(chorusStreamCreate(&stream), chorusSuccess);
      }
      std::vector<float> send(64, 1.0f + static_cast<float>(r));
      std::vector<float> recv(64 * static_cast<size_t>(n), 0.0f);
      bool ok = true;
      auto once = [&] {
        if (!ok) return;
        chorusResult_t rc = call(r, n, comm, stream, send.data(), recv.data());
        if (rc == chorusSuccess && stream != nullptr) rc = chorusStreamSynchronize(stream);
        EXPECT_EQ(rc, chorusSuccess) << chorusGetLastError(comm);
        ok = rc == chorusSuccess;
      };
      for (int i = 0; i < kWarm; ++i) once();
      const int64_t before = tAllocations;
      for (int i = 0; i < kCounted; ++i) once();
      if (ok) counts[static_cast<size_t>(r)] = tAllocations - before;
      if (stream != nullptr) chorusStreamDestroy(stream);
    });
  }
  for (auto& t : threads) t.join();
  for (chorusComm_t c : comms) chorusCommDestroy(c);
  int64_t most = 0;
  for (int64_t c : counts) {
    if (c < 0) return -1;
    most = std::max(most, c);
  }
  return most;
}

struct Case {
  const char* name;
  Call call;
};

const Case kCases[] = {
    {"all_reduce 8 B", [](int, int, chorusComm_t c, chorusStream_t s, float* in,
                          float* out) { return chorusAllReduce(in, out, 2, chorusFloat32, chorusSum, c, s); }},
    {"all_reduce 256 B in place",
     [](int, int, chorusComm_t c, chorusStream_t s, float*, float* out) {
       return chorusAllReduce(out, out, 64, chorusFloat32, chorusSum, c, s);
     }},
    {"broadcast 128 B", [](int, int, chorusComm_t c, chorusStream_t s, float* in,
                           float* out) { return chorusBroadcast(in, out, 32, chorusFloat32, 0, c, s); }},
    {"reduce 128 B", [](int, int n, chorusComm_t c, chorusStream_t s, float* in,
                        float* out) { return chorusReduce(in, out, 32, chorusFloat32, chorusMax, n - 1, c, s); }},
    {"all_gather 64 B per rank", [](int, int, chorusComm_t c, chorusStream_t s, float* in,
                                    float* out) { return chorusAllGather(in, out, 16, chorusFloat32, c, s); }},
    {"reduce_scatter 64 B per rank",
     [](int, int, chorusComm_t c, chorusStream_t s, float*, float* out) {
       return chorusReduceScatter(out, out + 48, 4, chorusFloat32, chorusSum, c, s);
     }},
    {"all_to_all 32 B per rank", [](int, int, chorusComm_t c, chorusStream_t s, float* in,
                                    float* out) { return chorusAlltoAll(in, out, 8, chorusFloat32, c, s); }},
    {"send/recv ring in a group",
     [](int r, int n, chorusComm_t c, chorusStream_t s, float* in, float* out) {
       chorusGroupStart();
       chorusSend(in, 16, chorusFloat32, (r + 1) % n, c, s);
       chorusRecv(out, 16, chorusFloat32, (r + n - 1) % n, c, s);
       return chorusGroupEnd();
     }},
};

// The replaced operator new sees the library's allocations (creating a communicator makes many), so a count of
// zero below means none, not "not counted".
TEST(WarmAllocCounter, SeesTheLibrarysAllocations) {
  const int64_t before = tAllocations;
  chorusComm_t comm = nullptr;
  ASSERT_EQ(chorusCommInitAll(&comm, 1, nullptr), chorusSuccess);
  EXPECT_GT(tAllocations - before, 0);
  chorusCommDestroy(comm);
}

class WarmAlloc : public testing::TestWithParam<int> {};

TEST_P(WarmAlloc, BlockingCallsAllocateNothing) {
  for (const Case& c : kCases) {
    EXPECT_EQ(countWarmAllocations(GetParam(), false, c.call), 0) << c.name << " on the NULL stream";
  }
}

TEST_P(WarmAlloc, HostStreamCallsAllocateNothing) {
  for (const Case& c : kCases) {
    EXPECT_EQ(countWarmAllocations(GetParam(), true, c.call), 0) << c.name << " on a host stream";
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, WarmAlloc, testing::Values(1, 2, 3),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

}  // namespace
