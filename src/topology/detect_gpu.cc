// GPUs and NVLinks through NVML, loaded with dlopen (never linked): without libnvidia-ml.so.1 there are no GPUs.
#include <dlfcn.h>

#include <algorithm>
#include <map>

#include "base/logging.h"
#include "topology/detect.h"

namespace chorus::topology {
namespace detail {
namespace {

// The few NVML types and entry points used (nvml.h, stable ABI).
using NvmlDevice = struct NvmlDeviceOpaque*;
struct NvmlPciInfo {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
constexpr int kNvmlMaxLinks = 18;

struct Nvml {
  void* lib = nullptr;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*count)(unsigned*) = nullptr;
  int (*handle)(unsigned, NvmlDevice*) = nullptr;
  int (*pciInfo)(NvmlDevice, NvmlPciInfo*) = nullptr;
  int (*capability)(NvmlDevice, int*, int*) = nullptr;
  int (*linkState)(NvmlDevice, unsigned, int*) = nullptr;
  int (*remotePci)(NvmlDevice, unsigned, NvmlPciInfo*) = nullptr;

  bool load() {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return false;
    auto sym = [&](auto& fn, const char* name) { fn = reinterpret_cast<std::decay_t<decltype(fn)>>(dlsym(lib, name)); };
    sym(init, "nvmlInit_v2");
    sym(shutdown, "nvmlShutdown");
    sym(count, "nvmlDeviceGetCount_v2");
    sym(handle, "nvmlDeviceGetHandleByIndex_v2");
    sym(pciInfo, "nvmlDeviceGetPciInfo_v3");
    if (pciInfo == nullptr) sym(pciInfo, "nvmlDeviceGetPciInfo_v2");
    sym(capability, "nvmlDeviceGetCudaComputeCapability");
    sym(linkState, "nvmlDeviceGetNvLinkState");
    sym(remotePci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    return init && shutdown && count && handle && pciInfo && capability;
  }
  ~Nvml() {
    if (lib != nullptr) dlclose(lib);
  }
};

struct GpuInfo {
  std::string busId;
  int sm = 0;
  std::map<std::string, int> nvlinks;  // remote bus id -> link count
};

}  // namespace

void detectGpus(XmlBuilder& b) {
  Nvml nvml;
  if (!nvml.load()) {
    CHORUS_LOG_INFO(kGraph, "NVML (libnvidia-ml.so.1) not available: ", dlerror() ? "not found" : "incomplete",
                    "; no GPUs detected");
    return;
  }
  if (nvml.init() != 0) {
    CHORUS_LOG_INFO(kGraph, "nvmlInit failed; no GPUs detected");
    return;
  }
  unsigned n = 0;
  if (nvml.count(&n) != 0) n = 0;
  std::vector<GpuInfo> gpus;
  for (unsigned i = 0; i < n; ++i) {
    NvmlDevice dev;
    NvmlPciInfo pci{};
    if (nvml.handle(i, &dev) != 0 || nvml.pciInfo(dev, &pci) != 0) continue;
    GpuInfo g;
    g.busId = normalizeBusId(pci.busId);
    int major = 0, minor = 0;
    if (nvml.capability(dev, &major, &minor) == 0) g.sm = major * 10 + minor;
    for (unsigned l = 0; nvml.linkState && nvml.remotePci && l < kNvmlMaxLinks; ++l) {
      int active = 0;
      NvmlPciInfo remote{};
      if (nvml.linkState(dev, l, &active) != 0 || !active) continue;
      if (nvml.remotePci(dev, l, &remote) != 0) continue;
      ++g.nvlinks[normalizeBusId(remote.busId)];
    }
    gpus.push_back(std::move(g));
  }
  nvml.shutdown();
  // CUDA numbers devices in PCI order when CUDA_DEVICE_ORDER=PCI_BUS_ID, the order NCCL's users expect.
  std::sort(gpus.begin(), gpus.end(), [](const GpuInfo& a, const GpuInfo& c) { return a.busId < c.busId; });
  for (size_t d = 0; d < gpus.size(); ++d) {
    XmlElement* pci = b.pci(gpus[d].busId);
    if (pci == nullptr) {
      CHORUS_LOG_INFO(kGraph, "GPU ", gpus[d].busId, " not found in sysfs; skipped");
      continue;
    }
    XmlElement& gpu = pci->add("gpu");
    gpu.set("dev", std::to_string(d));
    gpu.set("sm", std::to_string(gpus[d].sm));
    gpu.set("rank", std::to_string(d));
    gpu.set("gdr", "1");
    for (const auto& kv : gpus[d].nvlinks) {
      const std::string& target = kv.first;
      const int count = kv.second;
      bool isGpu = std::any_of(gpus.begin(), gpus.end(), [&](const GpuInfo& o) { return o.busId == target; });
      std::string cls = readSysfs("/sys/bus/pci/devices/" + target + "/class");
      XmlElement& link = gpu.add("nvlink");
      link.set("target", target);
      link.set("count", std::to_string(count));
      // NVSwitches may be invisible in sysfs: a remote end that is not a GPU is taken as a switch.
      link.set("tclass", isGpu ? (cls.empty() ? "0x030200" : cls) : (cls.empty() ? "0x068000" : cls));
    }
    CHORUS_LOG_INFO(kGraph, "NVML: GPU ", d, " at ", gpus[d].busId, " sm ", gpus[d].sm, ", ", gpus[d].nvlinks.size(),
                    " NVLink peer(s)");
  }
}

}  // namespace detail
}  // namespace chorus::topology
