#include "core/job_rendezvous.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "base/logging.h"
#include "base/params.h"

namespace chorus::core {

namespace {

constexpr const char* kMagic = "chorus-job-rendezvous";
constexpr int kVersion = 1;

// A launcher's variable, "" when unset or empty (read through base/params.h, the library's one reader).
std::string env(const char* name) {
  return param::text(name).value_or("");
}

// A file-name-safe copy of a job id: letters, digits, '.', '-' and '_'; anything else becomes '_'.
std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 96)) out += (isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-') ? c : '_';
  return out;
}

// "ompi-1100021761", or "" when no launcher says who the job is; *source names the variable.
std::string jobKey(std::string* source) {
  struct Id {
    const char* var;
    const char* prefix;
  };
  for (const Id& id : {Id{"OMPI_MCA_ess_base_jobid", "ompi-"}, Id{"OMPI_MCA_orte_ess_jobid", "ompi-"},
                       Id{"PMIX_NAMESPACE", "pmix-"}}) {
    if (const std::string v = env(id.var); !v.empty()) {
      *source = id.var;
      return id.prefix + sanitize(v);
    }
  }
  if (const std::string v = env("SLURM_JOB_ID"); !v.empty()) {
    const std::string step = env("SLURM_STEP_ID");
    *source = "SLURM_JOB_ID/SLURM_STEP_ID";
    return "slurm-" + sanitize(v) + "." + sanitize(step.empty() ? "x" : step);
  }
  return "";
}

// Whether the launcher says all `size` ranks are on this host: 1 yes, 0 no, -1 it does not say. *why names
// the variables that told.
int oneHost(int size, std::string* why) {
  if (const std::string v = env("OMPI_COMM_WORLD_LOCAL_SIZE"); !v.empty()) {
    *why = detail::concat("OMPI_COMM_WORLD_LOCAL_SIZE=", v, " of OMPI_COMM_WORLD_SIZE=", size);
    return atoi(v.c_str()) == size ? 1 : 0;
  }
  for (const char* var : {"SLURM_STEP_NUM_NODES", "SLURM_NNODES", "SLURM_JOB_NUM_NODES"}) {
    if (const std::string v = env(var); !v.empty()) {
      *why = detail::concat(var, "=", v);
      return atoi(v.c_str()) == 1 ? 1 : 0;
    }
  }
  if (const std::string v = env("MPI_LOCALNRANKS"); !v.empty()) {
    *why = detail::concat("MPI_LOCALNRANKS=", v, " of ", size, " ranks");
    return atoi(v.c_str()) == size ? 1 : 0;
  }
  return -1;
}

const char* kSetAddress =
    "set CHORUS_ADDR=host:port (a free port on rank 0's host), or MASTER_ADDR and MASTER_PORT, in every rank "
    "(with Open MPI: mpirun -x MASTER_ADDR=<rank 0's host> -x MASTER_PORT=29500 ...)";

// Start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat), or 0 when it is gone: a
// pid that was reused by another process does not pass for rank 0.
unsigned long long processStart(long pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream rest(stat.substr(paren + 2));
  std::string field;
  for (int i = 3; i < 22 && rest >> field; ++i) {
  }
  unsigned long long start = 0;
  rest >> start;
  return start;
}

std::string toHex(const uint8_t* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

// The id in the file at `path`, if it is this user's, well formed, and written by a live process.
bool readId(const std::string& path, bootstrap::UniqueId* id) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || st.st_uid != getuid() || (st.st_mode & 077) != 0) return false;
  std::ifstream f(path);
  std::string magic, hex;
  int version = 0;
  long pid = 0;
  unsigned long long start = 0;
  if (!(f >> magic >> version >> pid >> start >> hex) || magic != kMagic || version != kVersion) return false;
  if (hex.size() != 2 * bootstrap::kUniqueIdBytes || processStart(pid) != start) return false;
  uint8_t bytes[bootstrap::kUniqueIdBytes];
  for (size_t i = 0; i < bootstrap::kUniqueIdBytes; ++i) {
    bytes[i] = static_cast<uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  *id = bootstrap::decodeUniqueId(bytes);
  return true;
}

}  // namespace

std::string jobRendezvousFile(int size) {
  std::string source;
  const std::string key = jobKey(&source);
  CHORUS_CHECK_ARG(!key.empty(),
                   "no rendezvous address and no job identity to meet through (Open MPI's "
                   "OMPI_MCA_ess_base_jobid, PMIX_NAMESPACE or SLURM_JOB_ID): ",
                   kSetAddress);
  std::string why;
  const int local = oneHost(size, &why);
  CHORUS_CHECK_ARG(local != 0, "no rendezvous address, and the job spans several hosts (", why, "): ", kSetAddress);
  CHORUS_CHECK_ARG(local == 1,
                   "no rendezvous address, and the launcher does not say whether the job is on one "
                   "host (no OMPI_COMM_WORLD_LOCAL_SIZE, SLURM_NNODES or MPI_LOCALNRANKS): ",
                   kSetAddress);
  const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  // Every rank creates its communicators from the environment in the same order: the n-th one of the job
  // meets at its own file, so that a rank quick to create the next one never reads the previous file.
  static std::atomic<int> generation{0};
  return detail::concat(dir, "/chorus-job-", getuid(), "-", key, "-n", size, "-c", generation.fetch_add(1));
}

bootstrap::UniqueId publishJobId(const std::string& path) {
  bootstrap::UniqueId id = bootstrap::createUniqueId();
  uint8_t bytes[bootstrap::kUniqueIdBytes];
  bootstrap::encodeUniqueId(id, bytes);
  const std::string text = detail::concat(kMagic, " ", kVersion, " ", getpid(), " ", processStart(getpid()), "\n",
                                          toHex(bytes, sizeof(bytes)), "\n");
  // Written aside and renamed into place: a reader sees the whole file or none. 0600: the id holds the secret.
  const std::string tmp = detail::concat(path, ".tmp.", getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  CHORUS_CHECK_SYS(fd, "(creating the job rendezvous file ", tmp, ")");
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!written || rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    CHORUS_THROW(Status::kSystemError, "cannot publish the job rendezvous at ", path, ": ", strerror(err));
  }
  CHORUS_LOG_INFO(kBootstrap, "bootstrap: rank 0 published the job's rendezvous at ", path);
  return id;
}

bootstrap::UniqueId awaitJobId(const std::string& path, const WaitContext& ctx) {
  bootstrap::UniqueId id;
  for (int polls = 0;; ++polls) {
    if (readId(path, &id)) return id;
    if (ctx.deadline.expired()) {
      CHORUS_THROW(Status::kTimeout, ctx.what, ": rank 0 did not publish the job's rendezvous at ", path,
                   " before the deadline (is rank 0 running? across hosts, ", kSetAddress, ")");
    }
    // A file appears within milliseconds of rank 0's start; poll fast at first, then every 20 ms.
    std::this_thread::sleep_for(std::chrono::milliseconds(polls < 100 ? 2 : 20));
  }
}

void retractJobId(const std::string& path) {
  unlink(path.c_str());
}

}  // namespace chorus::core
