// NICs: InfiniBand/RoCE HCAs through ibverbs (dlopen libibverbs.so.1, never linked) and Ethernet interfaces from
// /sys/class/net.
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "base/logging.h"
#include "chorus_build_config.h"
#include "topology/detect.h"
#if CHORUS_BUILD_IBVERBS
#include <infiniband/verbs.h>
#endif

namespace chorus::topology {
namespace detail {
namespace {

// The PCI bus id a sysfs "device" link leads to (walking up past non-PCI levels such as virtio), or "".
std::string pciOfDevice(const std::string& deviceLink) {
  char buf[PATH_MAX];
  if (realpath(deviceLink.c_str(), buf) == nullptr) return "";
  std::string path = buf;
  if (path.find("/devices/virtual/") != std::string::npos) return "";
  std::string last;
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (part.size() == 12 && part[4] == ':' && part[7] == ':' && part[10] == '.') last = part;
    start = end + 1;
  }
  return last;
}

void addNet(XmlBuilder& b, const std::string& busId, const std::string& name, long mbps, int port,
            const std::string& guid, bool gdr) {
  XmlElement* parent = busId.empty() ? nullptr : b.pci(busId);
  if (parent == nullptr) parent = &b.cpu(0);  // no PCI path (virtual interface): hang it from the first CPU
  XmlElement* nic = nullptr;
  for (auto& c : parent->children)
    if (c.name == "nic") nic = &c;
  if (nic == nullptr || busId.empty()) nic = &parent->add("nic");
  XmlElement& net = nic->add("net");
  net.set("name", name);
  net.set("dev", std::to_string(b.nextNetDev()));
  net.set("speed", std::to_string(mbps > 0 ? mbps : 10000));
  net.set("port", std::to_string(port));
  net.set("latency", "0");
  net.set("guid", guid);
  net.set("maxconn", "65536");
  net.set("gdr", gdr ? "1" : "0");
}

#if CHORUS_BUILD_IBVERBS
// ibv_port_attr speed codes (IB spec): Gb/s per lane, and lanes per width code.
double laneGbps(int speed) {
  switch (speed) {
    case 1: return 2.5;
    case 2: return 5.0;
    case 4:
    case 8: return 10.0;
    case 16: return 14.0;
    case 32: return 25.0;
    case 64: return 50.0;
    case 128: return 100.0;
    case 256: return 200.0;
    default: return 2.5;
  }
}
int lanes(int width) {
  switch (width) {
    case 1: return 1;
    case 2: return 4;
    case 4: return 8;
    case 8: return 12;
    case 16: return 2;
    default: return 1;
  }
}
#endif

}  // namespace

void detectIbNics(XmlBuilder& b) {
#if CHORUS_BUILD_IBVERBS
  void* lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    CHORUS_LOG_INFO(kGraph, "ibverbs (libibverbs.so.1) not available; no RDMA NICs detected");
    return;
  }
  auto getList = reinterpret_cast<ibv_device** (*)(int*)>(dlsym(lib, "ibv_get_device_list"));
  auto freeList = reinterpret_cast<void (*)(ibv_device**)>(dlsym(lib, "ibv_free_device_list"));
  auto getName = reinterpret_cast<const char* (*)(ibv_device*)>(dlsym(lib, "ibv_get_device_name"));
  auto open = reinterpret_cast<ibv_context* (*)(ibv_device*)>(dlsym(lib, "ibv_open_device"));
  auto close = reinterpret_cast<int (*)(ibv_context*)>(dlsym(lib, "ibv_close_device"));
  auto queryDevice = reinterpret_cast<int (*)(ibv_context*, ibv_device_attr*)>(dlsym(lib, "ibv_query_device"));
  auto queryPort = reinterpret_cast<int (*)(ibv_context*, uint8_t, ibv_port_attr*)>(dlsym(lib, "ibv_query_port"));
  if (!getList || !freeList || !getName || !open || !close || !queryDevice || !queryPort) {
    CHORUS_LOG_INFO(kGraph, "libibverbs.so.1 lacks a needed symbol; no RDMA NICs detected");
    dlclose(lib);
    return;
  }
  int n = 0;
  ibv_device** list = getList(&n);
  for (int i = 0; list != nullptr && i < n; ++i) {
    std::string name = getName(list[i]);
    ibv_context* ctx = open(list[i]);
    if (ctx == nullptr) continue;
    ibv_device_attr attr{};
    if (queryDevice(ctx, &attr) == 0) {
      std::string busId = pciOfDevice("/sys/class/infiniband/" + name + "/device");
      for (int p = 1; p <= attr.phys_port_cnt; ++p) {
        ibv_port_attr pa{};
        if (queryPort(ctx, static_cast<uint8_t>(p), &pa) != 0 || pa.state != IBV_PORT_ACTIVE) continue;
        long mbps = static_cast<long>(laneGbps(pa.active_speed) * lanes(pa.active_width) * 1000);
        char guid[32];
        std::snprintf(guid, sizeof(guid), "0x%llx", static_cast<unsigned long long>(attr.node_guid));
        addNet(b, busId, name, mbps, p, guid, true);
        CHORUS_LOG_INFO(kGraph, "ibverbs: ", name, " port ", p, " ", mbps / 1000, " Gb/s at ", busId);
      }
    }
    close(ctx);
  }
  if (list != nullptr) freeList(list);
  if (n == 0) CHORUS_LOG_INFO(kGraph, "ibverbs: no RDMA device");
  dlclose(lib);
#else
  (void)b;
  CHORUS_LOG_INFO(kGraph, "built without ibverbs headers; no RDMA NICs detected");
#endif
}

void detectEthernetNics(XmlBuilder& b) {
  DIR* d = opendir("/sys/class/net");
  if (d == nullptr) {
    CHORUS_LOG_INFO(kGraph, "/sys/class/net not readable; no Ethernet NICs detected");
    return;
  }
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.empty() || name[0] == '.' || name == "lo") continue;
    names.push_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    std::string base = "/sys/class/net/" + name;
    if (readSysfs(base + "/operstate") != "up") continue;
    // RDMA-capable ports are reported by ibverbs already.
    if (access((base + "/device/infiniband").c_str(), F_OK) == 0 && b.netCount() > 0) continue;
    std::string busId = pciOfDevice(base + "/device");
    long mbps = std::atol(readSysfs(base + "/speed").c_str());
    addNet(b, busId, name, mbps, 1, "0x0", false);
    CHORUS_LOG_INFO(kGraph, "net: ", name, " ", mbps > 0 ? std::to_string(mbps) + " Mb/s" : "speed unknown",
                    busId.empty() ? " (virtual)" : " at " + busId);
  }
}

}  // namespace detail

}  // namespace chorus::topology
