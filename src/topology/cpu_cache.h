// A CPU's last-level cache, read from sysfs: what the executor's streaming-store rule scales with (core/topo_setup.cc,
// coll::TopoView::streamMinBytes).
#pragma once

#include <cstddef>
#include <string>

namespace chorus::topology {

// Bytes of "32768K", "1M", "8192" (sysfs's cache size format: a number with an optional K, M or G); 0 when the
// text is not such a size.
size_t parseCacheSize(const std::string& text);

// The size of CPU `cpu`'s last-level cache: its highest cache level that holds data (a unified or data cache), as
// listed under `cpuRoot` (/sys/devices/system/cpu/cpuN/cache/indexM); one instance, shared with the CPUs of its
// shared_cpu_list (an AMD CCD's L3 serves its own cores only, so the host's other instances do not count). 0 when
// sysfs says nothing. Reads sysfs on every call; callers keep the result.
size_t lastLevelCacheBytes(int cpu, const std::string& cpuRoot = "/sys/devices/system/cpu");

}  // namespace chorus::topology
