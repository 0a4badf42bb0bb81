// Cross Memory Attach: process_vm_readv copies straight from another process's memory into this one's, one copy
// where a FIFO slot costs two (the sender into the slot, the receiver out of it). The kernel allows it when this
// process may ptrace the other (same user, or CAP_SYS_PTRACE; and Yama's ptrace_scope: 0 allows any such pair,
// 1 only a descendant, 2 only CAP_SYS_PTRACE, 3 never). Open MPI's vader BTL uses the same call for large
// messages. The shared-memory transport probes it per connection (shm/transport.cc) and falls back to copying
// through the slots when it is refused or CHORUS_CMA_DISABLE=1.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace chorus::transport {

// True when CHORUS_CMA_DISABLE asks for the FIFO copy on every connection.
bool cmaDisabled();

// Whether this process may read the memory of process `pid`: a one-byte read of an address no process maps
// (below mmap_min_addr), which the kernel refuses with EPERM before it looks at the address when ptrace access
// is denied, and with EFAULT once it is allowed. When it is not allowed, *why says what the kernel answered (and
// Yama's ptrace_scope when there is one).
bool cmaPermitted(pid_t pid, std::string* why);

// Copies `bytes` bytes at `remote` in process `pid` into `local`, in as many calls as the kernel needs. Throws
// chorusRemoteError naming `what` when the process is gone, chorusSystemError when the kernel refuses (the
// message suggests CHORUS_CMA_DISABLE=1).
void cmaRead(pid_t pid, const void* remote, void* local, size_t bytes, const std::string& what);

// How many cmaRead calls this process has made (for tests: that a reference was, or was not, read through CMA).
uint64_t cmaReads();

// As cmaRead, but returns false instead of throwing (set-up probes).
bool cmaTryRead(pid_t pid, const void* remote, void* local, size_t bytes);

// How many times longer a CMA read of 256 KiB (this process reading itself, in cache) takes here than memcpy of
// the same bytes: the best of several tries of each, measured once per process and kept (under a millisecond).
// The kernel's copy differs from machine to machine far more than memcpy: 8x on an AMD EPYC (Zen 4) VM (16 GB/s,
// about 0.25 us per 4 KiB page in all), where on the Intel Xeon VM of earlier sessions one copy by CMA beat two
// through the slots by 1.3-2.8x (that machine's ratio was not recorded).
double cmaSlowdown();

// Whether one CMA copy beats the two copies through a FIFO's slots that it replaces: cmaSlowdown() of at most
// kCmaFastSlowdown. The two slot copies run on two cores, each at memcpy's speed, and the reference saves the
// hand-offs of every slot, so the kernel's copy may be somewhat slower than memcpy and still win. The limit, 3, is
// a judgement between the two machines measured (sendrecv_perf, 2 ranks: at 8x one copy lost at every size from 64
// KiB to 256 MiB, 1.6-2.2x slower), not a measured crossing point.
constexpr double kCmaFastSlowdown = 3.0;
bool cmaReadsFast();

}  // namespace chorus::transport
