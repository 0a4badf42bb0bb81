#include "transports.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "base/socket.h"
#include "dl_library.h"

namespace chorus::launcher {
namespace {

volatile uint64_t gCmaProbe = 0;

// Reads a word of a forked child's memory with process_vm_readv: what the cma transport does between ranks.
TransportProbe probeCma() {
  TransportProbe p{"cma", false, ""};
  int scope = -1;
  std::ifstream("/proc/sys/kernel/yama/ptrace_scope") >> scope;
  if (scope > 1) {
    p.detail = "kernel.yama.ptrace_scope is " + std::to_string(scope) + " (needs 0 or 1)";
    return p;
  }
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) {
    p.detail = std::string("pipe: ") + std::strerror(errno);
    return p;
  }
  const uint64_t kValue = 0x63686f7275730a01ull;
  pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    gCmaProbe = kValue;
    char c = 1;
    (void)!::write(ready[1], &c, 1);
    for (;;) pause();
  }
  ::close(ready[1]);
  if (child < 0) {
    p.detail = std::string("fork: ") + std::strerror(errno);
    ::close(ready[0]);
    return p;
  }
  char c = 0;
  ssize_t got = ::read(ready[0], &c, 1);
  ::close(ready[0]);
  uint64_t value = 0;
  iovec local{&value, sizeof(value)};
  iovec remote{const_cast<uint64_t*>(&gCmaProbe), sizeof(value)};
  ssize_t n = got == 1 ? process_vm_readv(child, &local, 1, &remote, 1, 0) : -1;
  int err = errno;
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  p.usable = n == static_cast<ssize_t>(sizeof(value)) && value == kValue;
  std::string how = scope >= 0 ? "ptrace_scope " + std::to_string(scope) + ", " : "";
  p.detail = p.usable ? how + "process_vm_readv works"
                      : "process_vm_readv failed: " + std::string(std::strerror(n < 0 ? err : EIO));
  return p;
}

TransportProbe probeSocket() {
  TransportProbe p{"socket", false, ""};
  for (const NetInterface& ni : findInterfaces("")) {
    std::string addr = ni.addr.toString();
    if (addr.size() > 2 && addr.compare(addr.size() - 2, 2, ":0") == 0) addr.resize(addr.size() - 2);
    if (addr.size() > 2 && addr.front() == '[' && addr.back() == ']') addr = addr.substr(1, addr.size() - 2);
    p.detail += (p.usable ? ", " : "") + ni.name + " " + addr;
    p.usable = true;
  }
  if (!p.usable) p.detail = "no interface is up";
  return p;
}

TransportProbe probeIbverbs() {
  TransportProbe p{"ibverbs", false, ""};
  DlLibrary ibv("libibverbs.so.1");
  using GetList = void** (*)(int*);
  using FreeList = void (*)(void**);
  using GetName = const char* (*)(void*);
  auto getList = ibv.symbol<GetList>("ibv_get_device_list");
  auto freeList = ibv.symbol<FreeList>("ibv_free_device_list");
  auto getName = ibv.symbol<GetName>("ibv_get_device_name");
  if (!ibv.loaded()) {
    p.detail = "libibverbs.so.1 not found";
  } else if (!getList || !freeList || !getName) {
    p.detail = "libibverbs.so.1 lacks ibv_get_device_list";
  } else {
    int n = 0;
    void** list = getList(&n);
    for (int i = 0; list != nullptr && i < n; ++i) p.detail += (i > 0 ? ", " : "") + std::string(getName(list[i]));
    if (list != nullptr) freeList(list);
    p.usable = n > 0;
    if (!p.usable) p.detail = "no RDMA device";
  }
  return p;
}

TransportProbe probeCuda() {
  TransportProbe p{"cuda", false, ""};
  DlLibrary cuda("libcuda.so.1");
  using Init = int (*)(unsigned);
  using Count = int (*)(int*);
  auto init = cuda.symbol<Init>("cuInit");
  auto count = cuda.symbol<Count>("cuDeviceGetCount");
  int n = 0;
  if (!cuda.loaded()) {
    p.detail = "libcuda.so.1 not found";
  } else if (!init || !count) {
    p.detail = "libcuda.so.1 lacks cuInit";
  } else if (int rc = init(0); rc != 0) {
    p.detail = "cuInit failed (CUDA error " + std::to_string(rc) + ")";
  } else if (count(&n) != 0 || n == 0) {
    p.detail = "no CUDA device";
  } else {
    p.usable = true;
    p.detail = std::to_string(n) + " device(s)";
  }
  return p;
}

}  // namespace

std::vector<TransportProbe> probeTransports(const MachineFacts& machine) {
  std::vector<TransportProbe> probes;
  probes.push_back({"inproc", true, "ranks that are threads of one process"});
  TransportProbe shm{"shm", machine.shmWritable && machine.shmFree > 0, ""};
  if (shm.usable) {
    shm.detail = "/dev/shm, " + formatBytes(machine.shmFree) + " free";
  } else {
    shm.detail = machine.shmWritable ? "/dev/shm is full" : "/dev/shm is missing or not writable";
  }
  probes.push_back(shm);
  probes.push_back(probeCma());
  probes.push_back(probeSocket());
  probes.push_back(probeIbverbs());
  probes.push_back(probeCuda());
  return probes;
}

}  // namespace chorus::launcher
