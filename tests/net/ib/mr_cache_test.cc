// The registration cache (transport/net/ib/mr_cache.h), with counting callbacks instead of ibv_reg_mr.
#include "transport/net/ib/mr_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <map>

#include "transport/net/net.h"

namespace chorus::netplugin::ib {
namespace {

// Records every registration and deregistration the cache asks for.
struct Recorder {
  std::map<ibv_mr*, std::pair<uintptr_t, size_t>> live;
  int regs = 0, deregs = 0;
  bool failNext = false;
  MrCache cache{[this](uintptr_t start, size_t length, int, std::string* why) -> ibv_mr* {
                  if (failNext) {
                    failNext = false;
                    *why = "refused";
                    return nullptr;
                  }
                  ++regs;
                  auto* mr = new ibv_mr{};
                  mr->addr = reinterpret_cast<void*>(start);
                  mr->length = length;
                  live[mr] = {start, length};
                  return mr;
                },
                [this](ibv_mr* mr) {
                  ++deregs;
                  live.erase(mr);
                  delete mr;
                  return 0;
                }};
};

const uintptr_t kPage = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));

struct Memory {
  void* p;
  explicit Memory(size_t n) : p(aligned_alloc(kPage, n)) {}
  ~Memory() { free(p); }
  char* at(size_t off) const { return static_cast<char*>(p) + off; }
};

TEST(MrCache, SameRangeTwiceIsOneRegistrationWithTwoReferences) {
  Recorder r;
  Memory m(16 * kPage);
  std::string why;
  MrCache::Entry* a = r.cache.acquire(m.p, 16 * kPage, CHORUS_PTR_HOST, &why);
  MrCache::Entry* b = r.cache.acquire(m.p, 16 * kPage, CHORUS_PTR_HOST, &why);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a->refs, 2);
  EXPECT_EQ(r.regs, 1);
  EXPECT_EQ(r.cache.size(), 1u);
  EXPECT_TRUE(r.cache.release(a, &why));
  EXPECT_EQ(r.deregs, 0);  // still referenced
  EXPECT_TRUE(r.cache.release(b, &why));
  EXPECT_EQ(r.deregs, 1);
  EXPECT_EQ(r.cache.size(), 0u);
  EXPECT_TRUE(r.live.empty());
}

TEST(MrCache, RangesRoundOutToPages) {
  Recorder r;
  Memory m(4 * kPage);
  std::string why;
  // [page 0 + 100, page 1 + 5) and [page 0, page 2) are the same two pages.
  MrCache::Entry* a = r.cache.acquire(m.at(100), kPage + 5 - 100, CHORUS_PTR_HOST, &why);
  MrCache::Entry* b = r.cache.acquire(m.p, 2 * kPage, CHORUS_PTR_HOST, &why);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a->start, reinterpret_cast<uintptr_t>(m.p));
  EXPECT_EQ(a->end, reinterpret_cast<uintptr_t>(m.p) + 2 * kPage);
  EXPECT_EQ(r.live.begin()->second.second, 2 * kPage);
  EXPECT_TRUE(a->covers(m.at(100), kPage));
  EXPECT_FALSE(a->covers(m.at(2 * kPage - 1), 2));  // runs past the registration
  EXPECT_TRUE(a->covers(m.at(2 * kPage), 0));       // an empty range at the end
  // A zero-byte buffer names its page.
  MrCache::Entry* z = r.cache.acquire(m.at(3 * kPage + 7), 0, CHORUS_PTR_HOST, &why);
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->end - z->start, kPage);
  EXPECT_EQ(r.regs, 2);
  EXPECT_TRUE(r.cache.release(a, &why));
  EXPECT_TRUE(r.cache.release(b, &why));
  EXPECT_TRUE(r.cache.release(z, &why));
  EXPECT_EQ(r.deregs, 2);
}

TEST(MrCache, OtherRangesAndTypesRegisterSeparately) {
  Recorder r;
  Memory m(16 * kPage);
  std::string why;
  MrCache::Entry* whole = r.cache.acquire(m.p, 16 * kPage, CHORUS_PTR_HOST, &why);
  // A range inside a larger registration is registered on its own (mr_cache.h says why).
  MrCache::Entry* half = r.cache.acquire(m.p, 8 * kPage, CHORUS_PTR_HOST, &why);
  MrCache::Entry* gpu = r.cache.acquire(m.p, 16 * kPage, CHORUS_PTR_CUDA, &why);
  EXPECT_NE(whole, half);
  EXPECT_NE(whole, gpu);
  EXPECT_EQ(r.regs, 3);
  EXPECT_EQ(r.cache.size(), 3u);
  // Released in another order than acquired.
  EXPECT_TRUE(r.cache.release(half, &why));
  EXPECT_TRUE(r.cache.release(whole, &why));
  EXPECT_TRUE(r.cache.release(gpu, &why));
  EXPECT_EQ(r.deregs, 3);
  EXPECT_TRUE(r.live.empty());
}

TEST(MrCache, ReleasedRangeIsRegisteredAfresh) {
  Recorder r;
  Memory m(4 * kPage);
  std::string why;
  MrCache::Entry* a = r.cache.acquire(m.p, 4 * kPage, CHORUS_PTR_HOST, &why);
  ASSERT_TRUE(r.cache.release(a, &why));
  MrCache::Entry* b = r.cache.acquire(m.p, 4 * kPage, CHORUS_PTR_HOST, &why);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->refs, 1);
  EXPECT_EQ(r.regs, 2);
  EXPECT_TRUE(r.cache.release(b, &why));
}

TEST(MrCache, FailuresAndStrangers) {
  Recorder r;
  Memory m(4 * kPage);
  std::string why;
  r.failNext = true;
  EXPECT_EQ(r.cache.acquire(m.p, kPage, CHORUS_PTR_HOST, &why), nullptr);
  EXPECT_EQ(why, "refused");
  EXPECT_EQ(r.cache.size(), 0u);
  MrCache::Entry stranger{&r.cache, 0, kPage, CHORUS_PTR_HOST, nullptr, 1};
  EXPECT_FALSE(r.cache.release(&stranger, &why));
  EXPECT_NE(why.find("not a live registration"), std::string::npos);
  MrCache::Entry* a = r.cache.acquire(m.p, kPage, CHORUS_PTR_HOST, &why);
  ASSERT_TRUE(r.cache.release(a, &why));
  EXPECT_FALSE(r.cache.release(a, &why));  // a second release of a freed entry is refused, not a crash
}

TEST(MrCache, DestructorDeregistersWhatIsLeft) {
  int deregs = 0;
  {
    MrCache cache([](uintptr_t, size_t, int, std::string*) { return new ibv_mr{}; },
                  [&deregs](ibv_mr* mr) {
                    ++deregs;
                    delete mr;
                    return 0;
                  });
    Memory m(2 * kPage);
    std::string why;
    cache.acquire(m.p, kPage, CHORUS_PTR_HOST, &why);
    cache.acquire(m.at(kPage), kPage, CHORUS_PTR_HOST, &why);
  }
  EXPECT_EQ(deregs, 2);
}

}  // namespace
}  // namespace chorus::netplugin::ib
