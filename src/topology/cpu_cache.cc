#include "topology/cpu_cache.h"

#include <dirent.h>

#include <cctype>
#include <cstdlib>
#include <vector>

#include "topology/detect.h"

namespace chorus::topology {
namespace {

// The names in `dir` that start with `prefix` and continue with digits ("index3").
std::vector<std::string> numberedEntries(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
        std::isdigit(static_cast<unsigned char>(name[prefix.size()])) &&
        name.find_first_not_of("0123456789", prefix.size()) == std::string::npos) {
      names.push_back(name);
    }
  }
  closedir(d);
  return names;
}

}  // namespace

size_t parseCacheSize(const std::string& text) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return 0;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(text.c_str(), &end, 10);
  std::string unit(end);
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.back()))) unit.pop_back();
  if (unit.empty()) return static_cast<size_t>(n);
  if (unit == "K") return static_cast<size_t>(n) << 10;
  if (unit == "M") return static_cast<size_t>(n) << 20;
  if (unit == "G") return static_cast<size_t>(n) << 30;
  return 0;
}

size_t lastLevelCacheBytes(int cpu, const std::string& cpuRoot) {
  const std::string cacheDir = cpuRoot + "/cpu" + std::to_string(cpu) + "/cache";
  int best = 0;
  size_t bytes = 0;
  for (const std::string& index : numberedEntries(cacheDir, "index")) {
    const std::string dir = cacheDir + "/" + index + "/";
    const std::string type = detail::readSysfs(dir + "type");
    if (type != "Unified" && type != "Data") continue;
    const int level = std::atoi(detail::readSysfs(dir + "level").c_str());
    const size_t size = parseCacheSize(detail::readSysfs(dir + "size"));
    if (level > best && size > 0) {
      best = level;
      bytes = size;
    }
  }
  return bytes;
}

}  // namespace chorus::topology
