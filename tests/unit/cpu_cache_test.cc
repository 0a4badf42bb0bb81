// The host's last-level caches from sysfs (topology/cpu_cache.h), on a made-up sysfs tree and on this machine.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "topology/cpu_cache.h"

namespace chorus::topology {
namespace {

constexpr size_t kKiB = 1024;

TEST(CpuCache, ParsesSysfsSizes) {
  EXPECT_EQ(parseCacheSize("32768K"), 32768 * kKiB);
  EXPECT_EQ(parseCacheSize("1M"), 1024 * kKiB);
  EXPECT_EQ(parseCacheSize("2G"), size_t{2} << 30);
  EXPECT_EQ(parseCacheSize("8192"), 8192u);
  EXPECT_EQ(parseCacheSize("48K\n"), 48 * kKiB);
  EXPECT_EQ(parseCacheSize(""), 0u);
  EXPECT_EQ(parseCacheSize("K"), 0u);
  EXPECT_EQ(parseCacheSize("12Q"), 0u);
}

// A sysfs cpu directory written under a temporary root.
class FakeSysfs {
 public:
  FakeSysfs() {
    char tmpl[] = "/tmp/chorus_cpu_cache_XXXXXX";
    root_ = mkdtemp(tmpl);
  }
  ~FakeSysfs() { std::system(("rm -rf " + root_).c_str()); }
  const std::string& root() const { return root_; }
  void cache(int cpu, int index, int level, const char* type, const char* size, const char* shared) {
    const std::string cpuDir = root_ + "/cpu" + std::to_string(cpu);
    const std::string dir = cpuDir + "/cache/index" + std::to_string(index);
    mkdir(cpuDir.c_str(), 0755);
    mkdir((cpuDir + "/cache").c_str(), 0755);
    mkdir(dir.c_str(), 0755);
    write(dir + "/level", std::to_string(level));
    write(dir + "/type", type);
    write(dir + "/size", size);
    write(dir + "/shared_cpu_list", shared);
  }

 private:
  static void write(const std::string& path, const std::string& text) { std::ofstream(path) << text << "\n"; }
  std::string root_;
};

// Each CPU's last level is its own L3 instance (32 MiB, shared with its neighbour), not the sum of the host's
// two; the L1 and L2 below it and an instruction cache do not count.
TEST(CpuCache, TheHighestDataLevelOfTheCpu) {
  FakeSysfs fs;
  for (int cpu = 0; cpu < 4; ++cpu) {
    const std::string self = std::to_string(cpu);
    fs.cache(cpu, 0, 1, "Data", "48K", self.c_str());
    fs.cache(cpu, 1, 1, "Instruction", "32K", self.c_str());
    fs.cache(cpu, 2, 2, "Unified", "1024K", self.c_str());
    fs.cache(cpu, 3, 3, "Unified", cpu < 2 ? "32768K" : "16M", cpu < 2 ? "0-1" : "2-3");
  }
  EXPECT_EQ(lastLevelCacheBytes(0, fs.root()), size_t{32} << 20);
  EXPECT_EQ(lastLevelCacheBytes(3, fs.root()), size_t{16} << 20);
  EXPECT_EQ(lastLevelCacheBytes(4, fs.root()), 0u);  // no such CPU
}

// Without an L3, the L2 is the last level.
TEST(CpuCache, TheLastLevelMayBeTheSecond) {
  FakeSysfs fs;
  fs.cache(0, 0, 1, "Data", "32K", "0");
  fs.cache(0, 1, 1, "Instruction", "64K", "0");
  fs.cache(0, 2, 2, "Unified", "2M", "0");
  EXPECT_EQ(lastLevelCacheBytes(0, fs.root()), size_t{2} << 20);
}

TEST(CpuCache, NothingKnownIsZero) {
  FakeSysfs fs;
  EXPECT_EQ(lastLevelCacheBytes(0, fs.root()), 0u);
  EXPECT_EQ(lastLevelCacheBytes(0, fs.root() + "/missing"), 0u);
}

// This machine's sysfs: some bytes where it lists CPU 0's caches, none where it does not (a container may hide them).
TEST(CpuCache, ThisHostReportsWhatSysfsLists) {
  const bool listed = static_cast<bool>(std::ifstream("/sys/devices/system/cpu/cpu0/cache/index0/size"));
  EXPECT_EQ(lastLevelCacheBytes(0) > 0, listed);
}

}  // namespace
}  // namespace chorus::topology
