#include "info.h"

#include <iomanip>
#include <string>

#include "chorus/chorus.h"
#include "chorus_build_config.h"
#include "machine.h"
#include "transports.h"

namespace chorus::launcher {
namespace {

std::string versionString() {
  int code = 0;
  if (chorusGetVersion(&code) != chorusSuccess) return "unknown (chorusGetVersion failed)";
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
}

const char* yesNo(bool b) {
  return b ? "yes" : "no";
}

}  // namespace

void printInfo(std::ostream& os) {
  auto row = [&os](const std::string& key) -> std::ostream& { return os << "  " << std::left << std::setw(10) << key; };
  os << "Chorus " << versionString() << "\n";
  os << "build:\n";
  row("CUDA") << yesNo(CHORUS_BUILD_CUDA) << "\n";
  row("MPI") << yesNo(CHORUS_BUILD_MPI) << "\n";
  row("hwloc") << yesNo(CHORUS_BUILD_HWLOC) << "\n";
  row("ibverbs") << yesNo(CHORUS_BUILD_IBVERBS) << "\n";
  std::string sanitizer = CHORUS_BUILD_SANITIZER;
  if (!sanitizer.empty()) row("sanitizer") << sanitizer << "\n";

  MachineFacts machine = probeMachine();
  os << "transports usable here:\n";
  for (const TransportProbe& p : probeTransports(machine)) {
    row(p.name) << std::setw(4) << yesNo(p.usable) << p.detail << "\n";
  }

  os << "machine:\n";
  row("hostname") << machine.hostname << "\n";
  row("cpu") << machine.cpuModel << "\n";
  row("cores") << machine.coresOnline << " online\n";
  row("numa") << machine.numaNodes << (machine.numaNodes == 1 ? " node" : " nodes") << "\n";
  row("memory") << formatBytes(machine.memTotal) << " total, " << formatBytes(machine.memAvailable) << " available\n";
  row("/dev/shm") << formatBytes(machine.shmFree) << " free" << (machine.shmWritable ? "" : " (not writable)") << "\n";
  if (machine.gpus.empty()) {
    row("gpus") << "none (" << machine.gpuNote << ")\n";
  } else {
    row("gpus") << machine.gpus.size() << "\n";
    for (size_t i = 0; i < machine.gpus.size(); ++i) os << "    " << i << ": " << machine.gpus[i] << "\n";
  }
}

}  // namespace chorus::launcher
