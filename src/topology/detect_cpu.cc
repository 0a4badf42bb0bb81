// CPU packages and NUMA nodes: hwloc when the build has it, sysfs otherwise; vendor and model from /proc/cpuinfo.
#include <dirent.h>
#include <sys/utsname.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "base/logging.h"
#include "chorus_build_config.h"
#include "topology/detect.h"
#if CHORUS_BUILD_HWLOC
#include <hwloc.h>
#endif

namespace chorus::topology {
namespace detail {
namespace {

struct CpuId {
  std::string vendor;
  int family = 0;
  int model = 0;
};

CpuId readCpuInfo() {
  CpuId id;
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  auto value = [](const std::string& l) {
    size_t c = l.find(':');
    return c == std::string::npos ? std::string() : l.substr(l.find_first_not_of(" \t", c + 1));
  };
  while (std::getline(f, line)) {
    if (line.rfind("vendor_id", 0) == 0 && id.vendor.empty()) id.vendor = value(line);
    if (line.rfind("cpu family", 0) == 0 && id.family == 0) id.family = std::atoi(value(line).c_str());
    if (line.rfind("model\t", 0) == 0 && id.model == 0) id.model = std::atoi(value(line).c_str());
    if (line.empty() && !id.vendor.empty()) break;
  }
  return id;
}

std::string machineArch() {
  utsname u{};
  if (uname(&u) != 0) return "";
  std::string m = u.machine;
  return m == "aarch64" ? "arm64" : m;
}

// NUMA nodes that have CPUs, with their cpumap ("ffffffff,ffffffff", NCCL's affinity format) from sysfs.
std::vector<std::pair<int, std::string>> sysfsNumaNodes() {
  std::vector<std::pair<int, std::string>> nodes;
  if (DIR* d = opendir("/sys/devices/system/node")) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.rfind("node", 0) != 0 || name.size() < 5 || !std::isdigit(static_cast<unsigned char>(name[4]))) continue;
      std::string map = readSysfs("/sys/devices/system/node/" + name + "/cpumap");
      if (map.find_first_not_of("0,") == std::string::npos) continue;  // memory-only node
      nodes.emplace_back(std::atoi(name.c_str() + 4), map);
    }
    closedir(d);
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

#if CHORUS_BUILD_HWLOC
// NUMA nodes with CPUs according to hwloc, as (os index, number of cores).
std::vector<std::pair<int, int>> hwlocNumaNodes(int* packages) {
  std::vector<std::pair<int, int>> out;
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return out;
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return out;
  }
  *packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t numa = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, i);
    if (numa->cpuset == nullptr || hwloc_bitmap_iszero(numa->cpuset)) continue;
    int cores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, numa->cpuset, HWLOC_OBJ_CORE);
    out.emplace_back(static_cast<int>(numa->os_index), cores);
  }
  hwloc_topology_destroy(topo);
  return out;
}
#endif

}  // namespace

void detectCpus(XmlBuilder& b) {
  CpuId id = readCpuInfo();
  std::string arch = machineArch();
  auto sysfs = sysfsNumaNodes();
  std::vector<int> numas;
#if CHORUS_BUILD_HWLOC
  int packages = 0;
  auto hw = hwlocNumaNodes(&packages);
  if (hw.empty()) {
    CHORUS_LOG_INFO(kGraph, "hwloc found no NUMA node with CPUs; using sysfs");
  } else {
    for (const auto& [numa, cores] : hw) {
      numas.push_back(numa);
      CHORUS_LOG_INFO(kGraph, "hwloc: NUMA node ", numa, " with ", cores, " cores (", packages, " package(s))");
    }
  }
#else
  CHORUS_LOG_INFO(kGraph, "built without hwloc; CPU and NUMA layout from sysfs");
#endif
  if (numas.empty())
    for (const auto& [numa, map] : sysfs) numas.push_back(numa);
  if (numas.empty()) {
    CHORUS_LOG_INFO(kGraph, "no NUMA information in sysfs; assuming one NUMA node");
    numas.push_back(0);
  }
  for (int numa : numas) {
    XmlElement& cpu = b.cpu(numa);
    for (const auto& [n, map] : sysfs)
      if (n == numa) cpu.set("affinity", map);
    cpu.set("arch", arch);
    if (!id.vendor.empty()) {
      cpu.set("vendor", id.vendor);
      cpu.set("familyid", std::to_string(id.family));
      cpu.set("modelid", std::to_string(id.model));
    }
  }
}

}  // namespace detail
}  // namespace chorus::topology
