// What a user sees around the collectives, through the public header only: chorusGetLastError (the latest error
// of a communicator, pointers that stay valid), the version line and quiet INFO logs (with the tuner's choices for
// ranks that outnumber their cores), an in-process communicator that opens no listener, chorusCommInitAll's
// devlist, and chorusCommInitFromEnv under a launcher that gives no address (plain mpirun on one host; a clear
// error across hosts).
#include <dirent.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "chorus/chorus.h"
#include "common/child.h"

namespace chorus::test {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// A scratch directory removed with its files.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/chorus-logs-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::string cmd = "rm -rf '" + path + "'";
    (void)!system(cmd.c_str());
  }
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    DIR* d = opendir(path.c_str());
    while (dirent* e = d ? readdir(d) : nullptr) {
      if (e->d_name[0] != '.') out.push_back(path + "/" + e->d_name);
    }
    if (d) closedir(d);
    return out;
  }
};

// ---- chorusGetLastError ----------------------------------------------------------------------------------------

// A tiny rendezvous of two threads at numbered steps.
class Steps {
 public:
  void reach(int step) {
    std::unique_lock<std::mutex> lock(mu_);
    done_ = step;
    cv_.notify_all();
  }
  void await(int step) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return done_ >= step; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int done_ = 0;
};

TEST(LastError, IsTheLatestErrorOfTheCommunicatorWhicheverThreadHadIt) {
  chorusComm_t comms[2];
  ASSERT_EQ(chorusCommInitAll(comms, 2, nullptr), chorusSuccess);
  Steps steps;
  std::string seen;
  std::thread other([&] {
    float x = 0;
    // This thread's own error on comms[0] ...
    EXPECT_EQ(chorusAllReduce(&x, &x, 1, static_cast<chorusDataType_t>(99), chorusSum, comms[0], nullptr),
              chorusInvalidArgument);
    EXPECT_TRUE(contains(chorusGetLastError(comms[0]), "datatype 99")) << chorusGetLastError(comms[0]);
    steps.reach(1);
    steps.await(2);
    // ... is older than the main thread's: the communicator's latest error wins.
    seen = chorusGetLastError(comms[0]);
  });
  steps.await(1);
  EXPECT_EQ(chorusCommCount(comms[0], nullptr), chorusInvalidArgument);
  steps.reach(2);
  other.join();
  EXPECT_TRUE(contains(seen, "count is NULL")) << seen;
  EXPECT_TRUE(contains(seen, "rank 0")) << seen;
  // Another communicator's errors do not leak into this one's.
  EXPECT_EQ(std::string(chorusGetLastError(comms[1])), "");
  for (chorusComm_t c : comms) chorusCommDestroy(c);
}

TEST(LastError, AsynchronousErrorsAreTheCommunicatorsToo) {
  chorusUniqueId id;
  ASSERT_EQ(chorusGetUniqueId(&id), chorusSuccess);
  chorusComm_t comms[2];
  std::thread t[2];
  for (int r = 0; r < 2; ++r) {
    t[r] = std::thread([&, r] {
      chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
      config.timeoutMs = 300;
      EXPECT_EQ(chorusCommInitRankConfig(&comms[r], 2, id, r, &config), chorusSuccess);
    });
  }
  for (auto& x : t) x.join();
  EXPECT_EQ(chorusCommCount(comms[0], nullptr), chorusInvalidArgument);
  // A receive nobody answers, on a host stream: it fails at its deadline, on the stream's thread.
  chorusStream_t s;
  ASSERT_EQ(chorusStreamCreate(&s), chorusSuccess);
  float x = 0;
  ASSERT_EQ(chorusRecv(&x, 1, chorusFloat32, 1, comms[0], s), chorusSuccess);
  EXPECT_EQ(chorusStreamSynchronize(s), chorusTimeout);
  const std::string last = chorusGetLastError(comms[0]);
  EXPECT_TRUE(contains(last, "deadline")) << last;
  EXPECT_FALSE(contains(last, "count is NULL")) << last;
  chorusStreamDestroy(s);
  for (chorusComm_t c : comms) chorusCommAbort(c);
}

TEST(LastError, APointerStaysValidUntilTheSameQuestionIsAskedAgain) {
  chorusComm_t comms[2];
  ASSERT_EQ(chorusCommInitAll(comms, 2, nullptr), chorusSuccess);
  EXPECT_EQ(chorusCommUserRank(comms[0], nullptr), chorusInvalidArgument);
  const char* forThread = chorusGetLastError(nullptr);
  const std::string threadCopy = forThread;
  const char* forComm = chorusGetLastError(comms[0]);
  const std::string commCopy = forComm;
  // Other questions, and newer errors, leave both strings as they were.
  EXPECT_EQ(chorusCommCount(comms[1], nullptr), chorusInvalidArgument);
  chorusGetLastError(comms[1]);
  EXPECT_EQ(chorusGetVersion(nullptr), chorusInvalidArgument);
  EXPECT_EQ(std::string(forThread), threadCopy);
  EXPECT_EQ(std::string(forComm), commCopy);
  EXPECT_TRUE(contains(threadCopy, "rank is NULL")) << threadCopy;
  // Asking again gives the newer error.
  EXPECT_TRUE(contains(chorusGetLastError(nullptr), "version is NULL")) << chorusGetLastError(nullptr);
  // A destroyed handle gets the thread's error, as NULL does.
  chorusCommDestroy(comms[0]);
  chorusCommDestroy(comms[1]);
  EXPECT_TRUE(contains(chorusGetLastError(comms[0]), "version is NULL"));
}

// ---- chorusCommInitAll's devlist --------------------------------------------------------------------------------

TEST(InitAllDevlist, HostRanksByName) {
  const int devs[3] = {CHORUS_DEVICE_HOST, CHORUS_DEVICE_HOST, CHORUS_DEVICE_HOST};
  chorusComm_t comms[3];
  ASSERT_EQ(chorusCommInitAll(comms, 3, devs), chorusSuccess) << chorusGetLastError(nullptr);
  std::thread t[3];
  for (int r = 0; r < 3; ++r) {
    t[r] = std::thread([&, r] {
      int dev = 0, x = r, y = -1;
      EXPECT_EQ(chorusCommCuDevice(comms[r], &dev), chorusSuccess);
      EXPECT_EQ(dev, CHORUS_DEVICE_HOST);
      EXPECT_EQ(chorusAllReduce(&x, &y, 1, chorusInt32, chorusSum, comms[r], nullptr), chorusSuccess);
      EXPECT_EQ(y, 3);
    });
  }
  for (auto& x : t) x.join();
  for (chorusComm_t c : comms) chorusCommDestroy(c);
  const int mixed[2] = {CHORUS_DEVICE_HOST, 0};
  EXPECT_EQ(chorusCommInitAll(comms, 2, mixed), chorusInvalidArgument);
  EXPECT_TRUE(contains(chorusGetLastError(nullptr), "mixes")) << chorusGetLastError(nullptr);
  const int autoDev[1] = {CHORUS_DEVICE_AUTO};
  EXPECT_EQ(chorusCommInitAll(comms, 1, autoDev), chorusInvalidArgument);
  EXPECT_TRUE(contains(chorusGetLastError(nullptr), "devlist[0] = -2")) << chorusGetLastError(nullptr);
}

// ---- no listener for an in-process communicator -------------------------------------------------------------

// TCP sockets of this process in the LISTEN state (/proc/net/tcp{,6} rows whose inode is one of our fds).
int listeningSockets() {
  std::set<std::string> inodes;
  DIR* d = opendir("/proc/self/fd");
  while (dirent* e = d ? readdir(d) : nullptr) {
    char link[256] = {};
    std::string path = std::string("/proc/self/fd/") + e->d_name;
    if (readlink(path.c_str(), link, sizeof(link) - 1) > 0 && strncmp(link, "socket:[", 8) == 0) {
      inodes.insert(std::string(link + 8, strlen(link) - 9));
    }
  }
  if (d) closedir(d);
  int n = 0;
  for (const char* table : {"/proc/self/net/tcp", "/proc/self/net/tcp6"}) {
    std::ifstream f(table);
    std::string line;
    std::getline(f, line);  // header
    while (std::getline(f, line)) {
      std::istringstream row(line);
      std::string field[10];
      for (auto& x : field) row >> x;
      if (field[3] == "0A" && inodes.count(field[9]) != 0) ++n;
    }
  }
  return n;
}

const bool kNoListenerChild = registerChild("no_listener", [](int, int, const std::vector<std::string>&) {
  if (listeningSockets() != 0) return 2;
  chorusComm_t comms[4];
  if (chorusCommInitAll(comms, 4, nullptr) != chorusSuccess) return 3;
  std::vector<std::thread> threads;
  int sums[4] = {0, 0, 0, 0};
  chorusComm_t halves[4] = {};
  for (int r = 0; r < 4; ++r) {
    threads.emplace_back([&, r] {
      int x = r;
      chorusAllReduce(&x, &sums[r], 1, chorusInt32, chorusSum, comms[r], nullptr);
      chorusCommSplit(comms[r], r % 2, r, &halves[r], nullptr);
      chorusAllReduce(&x, &sums[r], 1, chorusInt32, chorusSum, halves[r], nullptr);
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < 4; ++r) {
    if (sums[r] != (r % 2 == 0 ? 2 : 4)) return 4;
  }
  const int during = listeningSockets();
  for (int r = 0; r < 4; ++r) {
    chorusCommDestroy(halves[r]);
    chorusCommDestroy(comms[r]);
  }
  if (during != 0) {
    fprintf(stderr, "%d listening sockets while an in-process communicator lived\n", during);
    return 5;
  }
  // The check sees a listener when there is one: chorusGetUniqueId starts the process's endpoint.
  chorusUniqueId id;
  if (chorusGetUniqueId(&id) != chorusSuccess || listeningSockets() < 1) return 6;
  return 0;
});

TEST(InProcess, OpensNoNetworkListener) {
  auto results = runChildren("no_listener", 1);
  EXPECT_EQ(results[0].exitCode, 0);
}

// ---- logs ----------------------------------------------------------------------------------------------------

// Makes and uses an in-process communicator of two ranks (arg "inprocess") or joins the launcher's ranks.
const bool kLogChild = registerChild("log", [](int rank, int n, const std::vector<std::string>& args) {
  const bool inProcess = !args.empty() && args[0] == "inprocess";
  std::vector<chorusComm_t> comms(inProcess ? 2 : 1);
  if (inProcess ? chorusCommInitAll(comms.data(), 2, nullptr) : chorusCommInitFromEnv(&comms[0], nullptr)) return 2;
  std::vector<std::thread> threads;
  int bad = 0;
  for (size_t i = 0; i < comms.size(); ++i) {
    threads.emplace_back([&, i] {
      std::vector<float> x(100000, 1.0f), y(x.size());
      if (chorusAllReduce(x.data(), y.data(), x.size(), chorusFloat32, chorusSum, comms[i], nullptr) != chorusSuccess ||
          y[0] != (inProcess ? 2.0f : static_cast<float>(n))) {
        ++bad;
      }
      chorusCommFinalize(comms[i]);
      chorusCommDestroy(comms[i]);
    });
  }
  for (auto& t : threads) t.join();
  (void)rank;
  return bad == 0 ? 0 : 3;
});

std::vector<std::string> runLogged(const TempDir& dir, const std::string& level, int n, const std::string& mode) {
  ChildOptions opt;
  opt.args = {mode};
  opt.env = {{"CHORUS_DEBUG", level}, {"CHORUS_DEBUG_SUBSYS", "ALL"}, {"CHORUS_DEBUG_FILE", dir.path + "/log.%p"}};
  for (const ChildResult& r : runChildren("log", n, opt)) EXPECT_EQ(r.exitCode, 0);
  std::vector<std::string> logs;
  for (const std::string& f : dir.files()) logs.push_back(readFile(f));
  return logs;
}

TEST(Logs, VersionLevelPrintsTheBareVersionLineOnce) {
  TempDir dir;
  auto logs = runLogged(dir, "VERSION", 1, "inprocess");
  ASSERT_EQ(logs.size(), 1u);
  std::ostringstream want;
  want << "Chorus version " << CHORUS_MAJOR << "." << CHORUS_MINOR << "." << CHORUS_PATCH;
  EXPECT_EQ(logs[0].rfind(want.str(), 0), 0u) << logs[0];  // the first line, with no host:pid:tid prefix
  EXPECT_TRUE(contains(logs[0], "(NCCL 2.28.9 API)\n")) << logs[0];
  EXPECT_EQ(std::count(logs[0].begin(), logs[0].end(), '\n'), 1) << logs[0];
}

TEST(Logs, InfoHasTheVersionLineAndNoClosedConnections) {
  for (const char* mode : {"inprocess", "processes"}) {
    TempDir dir;
    const int n = std::string(mode) == "inprocess" ? 1 : 3;
    auto logs = runLogged(dir, "INFO", n, mode);
    ASSERT_EQ(logs.size(), static_cast<size_t>(n)) << mode;
    for (const std::string& log : logs) {
      EXPECT_TRUE(contains(log, " CHORUS INFO Chorus version ")) << log;
      EXPECT_FALSE(contains(log, "closed")) << mode << ":\n" << log;
      EXPECT_FALSE(contains(log, "WARN")) << mode << ":\n" << log;
    }
  }
}

// At WARN only rank 0 prints the version line, as NCCL does.
TEST(Logs, WarnLevelVersionLineComesFromRankZeroOnly) {
  TempDir dir;
  auto logs = runLogged(dir, "WARN", 3, "processes");
  int withVersion = 0;
  for (const std::string& log : logs) withVersion += contains(log, "Chorus version ") ? 1 : 0;
  EXPECT_EQ(withVersion, 1);
}

// Ranks below args[0] (all when absent) pin themselves to one CPU, the first they may run on, so that those ranks
// outnumber their cores on any machine. Then every rank joins the launcher's ranks and runs a broadcast of 8 KiB and
// a reduce of 8 KiB, checking every element.
const bool kOneCpuChild = registerChild("one_cpu", [](int rank, int n, const std::vector<std::string>& args) {
  const int pinned = args.empty() ? n : std::atoi(args[0].c_str());
  if (rank < pinned) {
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return 2;
    int first = 0;
    while (first < CPU_SETSIZE && !CPU_ISSET(first, &mask)) ++first;
    CPU_ZERO(&mask);
    CPU_SET(first, &mask);
    if (sched_setaffinity(0, sizeof(mask), &mask) != 0) return 3;
  }
  chorusComm_t comm;
  if (chorusCommInitFromEnv(&comm, nullptr) != chorusSuccess) return 4;
  std::vector<float> b(2048, static_cast<float>(rank));
  std::vector<float> r(2048, 1.0f + static_cast<float>(rank));
  std::vector<float> sum(r.size(), 0.0f);
  if (chorusBroadcast(b.data(), b.data(), b.size(), chorusFloat32, n - 1, comm, nullptr) != chorusSuccess ||
      chorusReduce(r.data(), sum.data(), r.size(), chorusFloat32, chorusSum, 0, comm, nullptr) != chorusSuccess) {
    fprintf(stderr, "rank %d: %s\n", rank, chorusGetLastError(comm));
    return 5;
  }
  const float want = static_cast<float>(n * (n + 1) / 2);
  for (float x : b) {
    if (x != static_cast<float>(n - 1)) return 6;
  }
  for (float x : sum) {
    if (rank == 0 && x != want) return 7;
  }
  // Each rank returns as soon as its part is done, with no final exchange: a plan connects only the pairs that carry
  // data (plan_connections_test.cc). When a direct broadcast or reduce connected every pair, a rank slowed by its
  // pinning (and by ThreadSanitizer) was refused by a peer that had finished and exited (5 of 5 runs under TSan).
  chorusCommFinalize(comm);
  chorusCommDestroy(comm);
  return 0;
});

// The tuner's lines of each log: "Broadcast: 8192 bytes, ... -> Ring, ..." up to the chunk, which may differ.
std::vector<std::string> tuningLines(const std::string& log) {
  std::vector<std::string> lines;
  for (const char* op : {"Broadcast: ", "Reduce: "}) {
    const size_t at = log.find(op);
    lines.push_back(at == std::string::npos ? "" : log.substr(at, log.find(", chunk", at) - at));
  }
  return lines;
}

// Ranks that outnumber their cores get rings where the model would pick trees (a broadcast and a reduce of 8 KiB at
// 4 ranks): there every wait yields the core, and a tree waited 3-9x longer (docs/performance.md).
TEST(Logs, OversubscribedRanksTuneToRingsNotTrees) {
  TempDir dir;
  ChildOptions opt;
  opt.env = {
      {"CHORUS_DEBUG", "INFO"}, {"CHORUS_DEBUG_SUBSYS", "INIT,TUNING"}, {"CHORUS_DEBUG_FILE", dir.path + "/log.%p"}};
  for (const ChildResult& r : runChildren("one_cpu", 4, opt)) EXPECT_EQ(r.exitCode, 0) << "pid " << r.pid;
  const std::vector<std::string> files = dir.files();
  ASSERT_EQ(files.size(), 4u);
  for (const std::string& f : files) {
    const std::string log = readFile(f);
    EXPECT_TRUE(contains(log, " oversubscribed transports per peer:")) << log;
    EXPECT_TRUE(contains(log, "Broadcast: 8192 bytes, 4 ranks on 1 hosts -> Ring")) << log;
    EXPECT_TRUE(contains(log, "Reduce: 8192 bytes, 4 ranks on 1 hosts -> Ring")) << log;
    EXPECT_FALSE(contains(log, "-> Tree")) << log;
  }
}

// One host oversubscribed (3 ranks pinned to one CPU) and one not (2 ranks, unpinned): every rank still tunes alike,
// and the operations complete. When each rank decided from its own host, the hosts ran trees and rings and waited for
// each other until the deadline.
TEST(Logs, EveryRankTunesAlikeWhenOnlyOneHostIsOversubscribed) {
  TempDir dir;
  ChildOptions opt;
  opt.hosts = 2;
  opt.args = {"3"};
  opt.env = {{"CHORUS_DEBUG", "INFO"},
             {"CHORUS_DEBUG_SUBSYS", "INIT,TUNING"},
             {"CHORUS_DEBUG_FILE", dir.path + "/log.%p"},
             {"CHORUS_TIMEOUT_MS", "20000"}};
  for (const ChildResult& r : runChildren("one_cpu", 5, opt)) EXPECT_EQ(r.exitCode, 0) << "pid " << r.pid;
  const std::vector<std::string> files = dir.files();
  ASSERT_EQ(files.size(), 5u);
  const std::vector<std::string> first = tuningLines(readFile(files[0]));
  EXPECT_FALSE(first[0].empty());
  EXPECT_FALSE(first[1].empty());
  int oversubscribed = 0;
  for (const std::string& f : files) {
    const std::string log = readFile(f);
    EXPECT_EQ(tuningLines(log), first) << log;
    EXPECT_FALSE(contains(log, "-> Tree")) << log;
    oversubscribed += contains(log, " oversubscribed transports per peer:") ? 1 : 0;
  }
  EXPECT_GE(oversubscribed, 3);  // the pinned host's ranks wait by yielding; the other host's decide for themselves
}

// ---- chorusCommInitFromEnv without an address ------------------------------------------------------------------

// Plays a rank of `mpirun -np n` on one host: only Open MPI's variables, no address. args[0]: the job id;
// args[1]: the local size the launcher reports (default n).
const bool kMpiChild = registerChild("plain_mpirun", [](int rank, int n, const std::vector<std::string>& args) {
  for (const char* v : {"CHORUS_RANK", "CHORUS_WORLD_SIZE", "CHORUS_ADDR", "CHORUS_SECRET", "MASTER_ADDR",
                        "MASTER_PORT", "RANK", "WORLD_SIZE", "PMIX_NAMESPACE", "SLURM_JOB_ID"}) {
    unsetenv(v);
  }
  setenv("OMPI_COMM_WORLD_RANK", std::to_string(rank).c_str(), 1);
  setenv("OMPI_COMM_WORLD_SIZE", std::to_string(n).c_str(), 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", args.size() > 1 ? args[1].c_str() : std::to_string(n).c_str(), 1);
  if (!args.empty() && !args[0].empty()) {
    setenv("OMPI_MCA_ess_base_jobid", args[0].c_str(), 1);
  } else {
    unsetenv("OMPI_MCA_ess_base_jobid");
  }
  // Two communicators in a row: the second one meets at its own file.
  for (int round = 0; round < 2; ++round) {
    chorusComm_t comm = nullptr;
    if (chorusCommInitFromEnv(&comm, nullptr) != chorusSuccess) {
      printf("init: %s\n", chorusGetLastError(nullptr));
      return 2;
    }
    int x = rank + 1, y = 0;
    if (chorusAllReduce(&x, &y, 1, chorusInt32, chorusSum, comm, nullptr) != chorusSuccess || y != n * (n + 1) / 2) {
      return 3;
    }
    chorusCommDestroy(comm);
  }
  return 0;
});

std::string uniqueJobId() {
  return std::to_string(getpid()) + "77" + std::to_string(time(nullptr) % 100000);
}

TEST(InitFromEnv, PlainMpirunOnOneHostNeedsNoAddress) {
  for (int n : {1, 2, 4}) {
    ChildOptions opt;
    const std::string job = uniqueJobId() + "n" + std::to_string(n);
    opt.args = {job};
    for (const ChildResult& r : runChildren("plain_mpirun", n, opt)) EXPECT_EQ(r.exitCode, 0) << n << " ranks";
    // Rank 0 removed the files once every rank had joined.
    for (const char* dir : {"/dev/shm", "/tmp"}) {
      DIR* d = opendir(dir);
      while (dirent* e = d ? readdir(d) : nullptr) EXPECT_FALSE(contains(e->d_name, "-ompi-" + job)) << e->d_name;
      if (d) closedir(d);
    }
  }
}

// Failures to meet are errors at once, naming what to set.
const bool kMpiErrorChild = registerChild("mpirun_error", [](int rank, int n, const std::vector<std::string>& args) {
  for (const char* v : {"CHORUS_RANK", "CHORUS_WORLD_SIZE", "CHORUS_ADDR", "CHORUS_SECRET", "MASTER_ADDR",
                        "MASTER_PORT", "PMIX_NAMESPACE", "SLURM_JOB_ID", "OMPI_MCA_orte_ess_jobid"}) {
    unsetenv(v);
  }
  setenv("OMPI_COMM_WORLD_RANK", std::to_string(rank).c_str(), 1);
  setenv("OMPI_COMM_WORLD_SIZE", std::to_string(n).c_str(), 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", args[1].c_str(), 1);
  if (args[0].empty()) {
    unsetenv("OMPI_MCA_ess_base_jobid");
  } else {
    setenv("OMPI_MCA_ess_base_jobid", args[0].c_str(), 1);
  }
  chorusComm_t comm = nullptr;
  if (chorusCommInitFromEnv(&comm, nullptr) != chorusInvalidArgument) return 2;
  const std::string msg = chorusGetLastError(nullptr);
  for (size_t i = 2; i < args.size(); ++i) {
    if (msg.find(args[i]) == std::string::npos) {
      fprintf(stderr, "'%s' lacks '%s'\n", msg.c_str(), args[i].c_str());
      return 3;
    }
  }
  return 0;
});

TEST(InitFromEnv, AcrossHostsTheErrorNamesTheVariablesToSet) {
  ChildOptions opt;
  opt.args = {uniqueJobId(), "2",           "spans several hosts", "OMPI_COMM_WORLD_LOCAL_SIZE=2",
              "CHORUS_ADDR", "MASTER_ADDR", "MASTER_PORT"};
  for (const ChildResult& r : runChildren("mpirun_error", 4, opt)) EXPECT_EQ(r.exitCode, 0);
  opt.args = {"", "4", "no job identity", "OMPI_MCA_ess_base_jobid", "CHORUS_ADDR", "MASTER_ADDR"};
  for (const ChildResult& r : runChildren("mpirun_error", 4, opt)) EXPECT_EQ(r.exitCode, 0);
}

}  // namespace
}  // namespace chorus::test

CHORUS_TEST_MAIN()
