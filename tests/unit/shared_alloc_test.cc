// The registry of chorusMemAlloc allocations and the mapping of a peer's allocation (base/shared_alloc.h), in one
// process: what the receiver of a mapped reference may open, and what it must refuse (a name that is not an allocation
// of the process the reference comes from, a freed allocation) with chorusRemoteError instead of mapping it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <string>

#include "base/error.h"
#include "base/shared_alloc.h"
#include "base/shm.h"
#include "chorus/chorus.h"

namespace chorus {
namespace {

// A chorusMemAlloc buffer of `bytes`, freed when it goes (unless freed before).
struct Allocation {
  explicit Allocation(size_t bytes) {
    EXPECT_EQ(chorusMemAlloc(&ptr, bytes), chorusSuccess) << chorusGetLastError(nullptr);
  }
  ~Allocation() { free(); }
  void free() {
    if (ptr != nullptr) chorusMemFree(ptr);
    ptr = nullptr;
  }
  void* ptr = nullptr;
};

// Expects `fn` to throw chorus::Error with status kRemoteError and a message that contains `words`.
template <typename Fn>
void expectRemoteError(Fn&& fn, const std::string& words) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one about: " << words;
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kRemoteError) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(SharedAlloc, AnAllocationIsFoundByAnyRangeInsideIt) {
  constexpr size_t kBytes = size_t{3} << 20;
  Allocation a(kBytes);
  ASSERT_NE(a.ptr, nullptr);
  char* base = static_cast<char*>(a.ptr);
  SharedAlloc found;
  ASSERT_TRUE(findSharedAlloc(base + 100, 1000, &found));
  EXPECT_EQ(found.base, reinterpret_cast<uintptr_t>(base));
  EXPECT_GE(found.bytes, kBytes);
  EXPECT_EQ(std::string(found.name).rfind("/chorus-mem-" + std::to_string(getpid()) + "-", 0), 0u) << found.name;
  EXPECT_TRUE(findSharedAlloc(base, found.bytes));
  EXPECT_FALSE(findSharedAlloc(base + 1, found.bytes));  // runs past the end
  int onStack = 0;
  EXPECT_FALSE(findSharedAlloc(&onStack, sizeof(onStack)));
  a.free();
  EXPECT_FALSE(findSharedAlloc(base + 100, 1000));
}

// What the owner writes is what a mapping shows: the receiver's copy reads the sender's buffer itself.
TEST(SharedAlloc, TheOwnersAllocationMapsToTheSameBytes) {
  Allocation a(1 << 20);
  ASSERT_NE(a.ptr, nullptr);
  SharedAlloc found;
  ASSERT_TRUE(findSharedAlloc(a.ptr, 1, &found));
  memset(a.ptr, 0x5A, 4096);
  auto mapped = mapPeerAlloc(found.name, found.bytes, getpid());
  ASSERT_GE(mapped->size(), found.bytes);
  EXPECT_EQ(memcmp(mapped->data(), a.ptr, 4096), 0);
  static_cast<char*>(a.ptr)[7] = 0x11;
  EXPECT_EQ(static_cast<const char*>(mapped->data())[7], 0x11);
}

// A reference carries its sender's pid and an allocation's name: a name that is not an allocation of that process is
// refused before anything is opened.
TEST(SharedAlloc, ANameOfAnotherProcessOrNoAllocationIsRefused) {
  Allocation a(1 << 16);
  ASSERT_NE(a.ptr, nullptr);
  SharedAlloc found;
  ASSERT_TRUE(findSharedAlloc(a.ptr, 1, &found));
  expectRemoteError([&] { mapPeerAlloc(found.name, found.bytes, getpid() + 1); }, "not a chorusMemAlloc allocation");
  const std::string other = "/chorus-shm-" + std::to_string(getpid()) + "-0";
  expectRemoteError([&] { mapPeerAlloc(other.c_str(), 4096, getpid()); }, "not a chorusMemAlloc allocation");
  char unterminated[kSharedAllocNameBytes];
  memset(unterminated, 'a', sizeof(unterminated));
  expectRemoteError([&] { mapPeerAlloc(unterminated, 4096, getpid()); }, "not a chorusMemAlloc allocation");
}

// An allocation freed before its reader mapped it is gone: the read fails with a message that says so.
TEST(SharedAlloc, AFreedAllocationCannotBeMapped) {
  Allocation a(1 << 16);
  ASSERT_NE(a.ptr, nullptr);
  SharedAlloc found;
  ASSERT_TRUE(findSharedAlloc(a.ptr, 1, &found));
  a.free();
  expectRemoteError([&] { mapPeerAlloc(found.name, found.bytes, getpid()); }, "freed");
}

}  // namespace
}  // namespace chorus
