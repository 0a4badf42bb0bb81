// Facts about this machine for chorusrun --info: what a user checks before launching a job here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chorus::launcher {

struct MachineFacts {
  std::string hostname;
  std::string cpuModel;  // "model name" of /proc/cpuinfo, or "unknown"
  long coresOnline = 0;
  int numaNodes = 0;  // node* folders of /sys/devices/system/node; 0 when the folder is missing
  uint64_t memTotal = 0;
  uint64_t memAvailable = 0;
  bool shmWritable = false;       // /dev/shm exists and this user may create files in it
  uint64_t shmFree = 0;           // bytes an unprivileged user may still allocate in /dev/shm
  std::vector<std::string> gpus;  // names from NVML
  std::string gpuNote;            // why there are none ("libnvidia-ml.so.1 not found")
};

MachineFacts probeMachine();

// "23.4 GiB", "512 MiB", "12 KiB", "100 B".
std::string formatBytes(uint64_t bytes);

}  // namespace chorus::launcher
