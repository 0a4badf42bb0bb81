#include "machine.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dl_library.h"

namespace chorus::launcher {
namespace {

std::string cpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
  }
  return "unknown";
}

int numaNodes() {
  std::error_code ec;
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/sys/devices/system/node", ec)) {
    std::string name = e.path().filename().string();
    if (name.size() > 4 && name.rfind("node", 0) == 0 && name.find_first_not_of("0123456789", 4) == std::string::npos) {
      ++n;
    }
  }
  return n;
}

// MemTotal and MemAvailable of /proc/meminfo, in bytes.
void memory(uint64_t* total, uint64_t* available) {
  std::ifstream f("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (f >> key >> kib) {
    std::getline(f, unit);
    if (key == "MemTotal:") *total = kib * 1024;
    if (key == "MemAvailable:") *available = kib * 1024;
  }
}

// NVML's names of the GPUs, or a note saying why there are none.
void gpus(std::vector<std::string>* names, std::string* note) {
  DlLibrary nvml("libnvidia-ml.so.1");
  if (!nvml.loaded()) {
    *note = "libnvidia-ml.so.1 not found";
    return;
  }
  using Init = int (*)();
  using Count = int (*)(unsigned*);
  using Handle = int (*)(unsigned, void**);
  using Name = int (*)(void*, char*, unsigned);
  auto init = nvml.symbol<Init>("nvmlInit_v2");
  auto shutdown = nvml.symbol<Init>("nvmlShutdown");
  auto count = nvml.symbol<Count>("nvmlDeviceGetCount_v2");
  auto handle = nvml.symbol<Handle>("nvmlDeviceGetHandleByIndex_v2");
  auto name = nvml.symbol<Name>("nvmlDeviceGetName");
  if (!init || !shutdown || !count || !handle || !name) {
    *note = "libnvidia-ml.so.1 lacks the NVML functions used";
    return;
  }
  if (int rc = init(); rc != 0) {
    *note = "nvmlInit failed (NVML error " + std::to_string(rc) + ")";
    return;
  }
  unsigned n = 0;
  if (count(&n) != 0) n = 0;
  for (unsigned i = 0; i < n; ++i) {
    void* device = nullptr;
    char text[96] = {};
    if (handle(i, &device) == 0 && name(device, text, sizeof(text)) == 0) {
      names->emplace_back(text);
    } else {
      names->emplace_back("GPU " + std::to_string(i) + " (name unavailable)");
    }
  }
  shutdown();
  if (names->empty()) *note = "NVML sees no GPU";
}

}  // namespace

std::string formatBytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(kUnits)) {
    v /= 1024;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof(text), u == 0 ? "%.0f %s" : "%.1f %s", v, kUnits[u]);
  return text;
}

MachineFacts probeMachine() {
  MachineFacts m;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  m.hostname = host;
  m.cpuModel = cpuModel();
  m.coresOnline = sysconf(_SC_NPROCESSORS_ONLN);
  m.numaNodes = numaNodes();
  memory(&m.memTotal, &m.memAvailable);
  struct statvfs st {};
  if (statvfs("/dev/shm", &st) == 0) {
    m.shmFree = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
    m.shmWritable = access("/dev/shm", W_OK | X_OK) == 0;
  }
  gpus(&m.gpus, &m.gpuNote);
  return m;
}

}  // namespace chorus::launcher
