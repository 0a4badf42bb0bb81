#include "core/env_launch.h"

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/params.h"
#include "core/job_rendezvous.h"

namespace chorus::core {

namespace {

struct Source {
  const char* rankVar;
  const char* sizeVar;
};

// In order of precedence.
constexpr Source kSources[] = {
    {"CHORUS_RANK", "CHORUS_WORLD_SIZE"},
    {"RANK", "WORLD_SIZE"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "PMI_SIZE"},
    {"SLURM_PROCID", "SLURM_NTASKS"},
};

int parseInt(const char* var, const char* text) {
  char* end = nullptr;
  long v = strtol(text, &end, 10);
  CHORUS_CHECK_ARG(end != text && *end == '\0' && v >= 0 && v < (1L << 30), var, "='", text,
                   "' is not a non-negative integer");
  return static_cast<int>(v);
}

}  // namespace

LaunchInfo readLaunchInfo() {
  LaunchInfo info;
  for (const Source& s : kSources) {
    const std::optional<std::string> r = param::text(s.rankVar);
    const std::optional<std::string> n = param::text(s.sizeVar);
    if (!r && !n) continue;
    CHORUS_CHECK_ARG(r && n, s.rankVar, " and ", s.sizeVar, " must be set together (only ", r ? s.rankVar : s.sizeVar,
                     " is set)");
    int rank = parseInt(s.rankVar, r->c_str());
    int size = parseInt(s.sizeVar, n->c_str());
    std::string name = std::string(s.rankVar) + "/" + s.sizeVar;
    CHORUS_CHECK_ARG(size >= 1 && rank < size, name, " = ", rank, "/", size, ": rank must be in [0, size)");
    if (info.rank < 0) {
      info.rank = rank;
      info.size = size;
      info.rankSource = name;
    } else {
      CHORUS_CHECK_ARG(info.rank == rank && info.size == size, "launcher variables disagree: ", info.rankSource, " = ",
                       info.rank, "/", info.size, " but ", name, " = ", rank, "/", size);
    }
  }
  CHORUS_CHECK_ARG(info.rank >= 0,
                   "no rank in the environment: set CHORUS_RANK/CHORUS_WORLD_SIZE (chorusrun does), RANK/WORLD_SIZE "
                   "(torchrun), or run under mpirun, PMI or Slurm");

  const std::optional<std::string> addr = param::text("CHORUS_ADDR");
  const std::optional<std::string> maddr = param::text("MASTER_ADDR");
  const std::optional<std::string> mport = param::text("MASTER_PORT");
  if (addr && !addr->empty()) {
    info.addr = *addr;
    info.addrSource = "CHORUS_ADDR";
  } else if (maddr && mport) {
    std::string host = *maddr;
    if (host.find(':') != std::string::npos && host[0] != '[') host = "[" + host + "]";
    info.addr = host + ":" + *mport;
    info.addrSource = "MASTER_ADDR/MASTER_PORT";
  } else {
    // Plain mpirun or srun on one host: the ranks meet through a file named after the job.
    info.rendezvousFile = jobRendezvousFile(info.size);
  }
  if (const std::optional<std::string> secret = param::text("CHORUS_SECRET")) info.secretHex = *secret;
  return info;
}

}  // namespace chorus::core
