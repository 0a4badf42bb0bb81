// Launch: who the ranks are and how their communicators are made.
//   mpirun            one process per MPI rank; rank 0's chorusGetUniqueId travels by MPI_Bcast.
//   chorusrun         CHORUS_RANK/CHORUS_WORLD_SIZE/CHORUS_ADDR set: chorusCommInitFromEnv, one rank per process.
//   neither           one process of -t threads: chorusCommInitAll, or with -p 1 a unique id shared by the
//                     threads and chorusCommInitRank from each.
// In every case a thread drives -g ranks (through chorusGroupStart/End), and rank = (proc*t + thread)*g + i.
#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>

#include "driver.h"
#if CHORUS_PERF_HAVE_MPI
#include "mpi_backend.h"
#endif

namespace chorus::perf {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kDeviceRecord = 512;  // bytes per device line gathered through Chorus

std::string hostName() {
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) return "unknown";
  return host;
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "CPU";
}

const char* envOf(std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (const char* v = std::getenv(n)) return v;
  }
  return nullptr;
}

// Runs fn(i) for i < n, each on its own thread: every rank of a communicator must be inside its (blocking)
// init or finalize at the same time, so one thread cannot make several ranks' calls one after the other.
template <typename Fn>
void forEachConcurrently(int n, Fn fn) {
  if (n == 1) {
    fn(0);
    return;
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) threads.emplace_back(fn, i);
  for (std::thread& t : threads) t.join();
}

class Launch {
 public:
  Launch(const Options& opts, const Collective& coll) : opts_(opts), coll_(coll) {}
  int run(int* argc, char*** argv);

 private:
  int usageError(const std::string& message);
  int finish(int status);
  void initComms();
  std::vector<DeviceLine> gatherDevices();
  void allocate();
  void release();

  const Options& opts_;
  const Collective& coll_;
  bool useMpi_ = false;
  bool envMode_ = false;
  int nProcs_ = 1;
  int proc_ = 0;
  int perProc_ = 1;  // ranks in this process: t * g
  int nranks_ = 1;
  std::unique_ptr<ProcessGroup> processes_;
  std::vector<chorusComm_t> comms_;
  std::vector<ThreadContext> threads_;
  std::unique_ptr<Report> report_;
};

int Launch::usageError(const std::string& message) {
  if (proc_ == 0) std::fprintf(stderr, "%s: %s\n", coll_.programName, message.c_str());
  return finish(kExitUsage);
}

int Launch::finish(int status) {
#if CHORUS_PERF_HAVE_MPI
  if (useMpi_) {
    status = mpiMaxStatus(status);
    mpiFinalize();
  }
#endif
  return status;
}

int Launch::run(int* argc, char*** argv) {
  const bool needMpi = opts_.backend == Backend::kMpi || opts_.compareMpi;
  const bool chorusNeeded = opts_.backend == Backend::kChorus;
#if CHORUS_PERF_HAVE_MPI
  useMpi_ = needMpi || launchedByMpi();
  if (useMpi_) {
    mpiInit(argc, argv);
    processes_ = std::make_unique<MpiProcessGroup>();
    nProcs_ = processes_->size();
    proc_ = processes_->rank();
  }
#else
  (void)argc;
  (void)argv;
  if (needMpi) {
    return usageError(std::string(opts_.compareMpi ? "--compare" : "--backend") + ": this build has no MPI support");
  }
#endif
  const char* envRank = std::getenv("CHORUS_RANK");
  const char* envSize = std::getenv("CHORUS_WORLD_SIZE");
  envMode_ = !useMpi_ && envRank != nullptr && envSize != nullptr;
  if (envMode_) {
    nProcs_ = std::max(1, std::atoi(envSize));
    proc_ = std::atoi(envRank);
  }
  perProc_ = opts_.nThreads * opts_.nGpus;
  nranks_ = nProcs_ * perProc_;
  if (needMpi && perProc_ != 1) {
    return usageError(std::string(opts_.nThreads > 1 ? "-t" : "-g") +
                      ": --backend mpi and --compare mpi run one rank per process (use -t 1 -g 1)");
  }
  if (envMode_ && perProc_ != 1) {
    return usageError(std::string(opts_.nThreads > 1 ? "-t" : "-g") +
                      ": under chorusrun each process is one rank (use -t 1 -g 1)");
  }
  if (coll_.usesRoot && opts_.root >= nranks_) {
    return usageError("-r: root " + std::to_string(opts_.root) + " is out of range for " + std::to_string(nranks_) +
                      " ranks");
  }
  if (coll_.needsPowerOfTwo && (nranks_ & (nranks_ - 1)) != 0) {
    return usageError("-t: " + std::string(coll_.programName) + " needs a power-of-two number of ranks, not " +
                      std::to_string(nranks_));
  }

  if (proc_ == 0) {
    report_ = std::make_unique<Report>(opts_, coll_);
    std::string backendLine;
#if CHORUS_PERF_HAVE_MPI
    if (opts_.backend == Backend::kMpi) backendLine = "Backend: mpi (" + mpiLibraryVersion() + ")";
    if (opts_.compareMpi) {
      backendLine = "Compare: chorus and mpi (" + mpiLibraryVersion() +
                    "), extra columns: MPI time, MPI busbw, ratio = chorus busbw / MPI busbw";
    }
#endif
    report_->header(opts_.nThreads, opts_.nGpus, backendLine);
  }
  watchdogStart(opts_.timeoutSec, coll_.programName);
  if (chorusNeeded || opts_.compareMpi) initComms();
  if (envMode_) processes_ = std::make_unique<ChorusProcessGroup>(comms_[0]);
  if (!processes_) processes_ = std::make_unique<SingleProcess>();
  std::vector<DeviceLine> devices = gatherDevices();
  if (report_) {
    report_->devices(devices);
    report_->tableHeader();
  }

  allocate();
  Team team(opts_.nThreads, processes_.get());
  for (ThreadContext& t : threads_) t.team = &team;
  if (report_) threads_[0].report = report_.get();
  std::vector<std::thread> workers;
  for (int t = 1; t < opts_.nThreads; ++t) workers.emplace_back(runThread, std::ref(threads_[t]));
  runThread(threads_[0]);
  for (std::thread& w : workers) w.join();

  const ThreadContext& main = threads_[0];
  const double avgBw = main.busBwCount > 0 ? main.busBwSum / main.busBwCount : 0;
  const char* minBwText = std::getenv("NCCL_TESTS_MIN_BW");
  const double minBw = minBwText != nullptr ? std::atof(minBwText) : -1;
  if (report_) {
    report_->footer(main.errors, avgBw, minBw);
    report_.reset();  // closes the JSON file
  }
  watchdogStop();
  release();
  const bool bwFailed = minBw >= 0 && avgBw < minBw * 0.9;
  return finish(main.errors != 0 || bwFailed ? kExitFailure : kExitOk);
}

void Launch::initComms() {
  comms_.assign(static_cast<size_t>(perProc_), nullptr);
  RankState any;
  if (envMode_) {
    chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
    config.device = CHORUS_DEVICE_HOST;
    any.rank = proc_;
    checkChorus(chorusCommInitFromEnv(&comms_[0], &config), "chorusCommInitFromEnv", any);
  } else if (!useMpi_ && !opts_.parallelInit) {
    checkChorus(chorusCommInitAll(comms_.data(), perProc_, nullptr), "chorusCommInitAll", any);
  } else {
    chorusUniqueId id;
    std::memset(&id, 0, sizeof id);
    if (proc_ == 0) checkChorus(chorusGetUniqueId(&id), "chorusGetUniqueId", any);
#if CHORUS_PERF_HAVE_MPI
    if (useMpi_) mpiBroadcastId(&id);
#endif
    forEachConcurrently(perProc_, [&](int i) {
      chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
      config.device = CHORUS_DEVICE_HOST;
      RankState self;
      self.rank = proc_ * perProc_ + i;
      checkChorus(chorusCommInitRankConfig(&comms_[static_cast<size_t>(i)], nranks_, id, self.rank, &config),
                  "chorusCommInitRankConfig", self);
    });
  }
  for (chorusComm_t c : comms_) watchdogWatch(c);
}

std::vector<DeviceLine> Launch::gatherDevices() {
  std::vector<DeviceLine> local;
  const std::string host = hostName();
  const std::string model = cpuModel();
  for (int i = 0; i < perProc_; ++i) {
    DeviceLine d;
    d.rank = proc_ * perProc_ + i;
    d.pid = static_cast<int>(getpid());
    d.host = host;
    if (!comms_.empty()) chorusCommDevice(comms_[static_cast<size_t>(i)], &d.device);
    d.info = model;
    local.push_back(d);
  }
  if (nProcs_ == 1) return local;
  std::string text;
  for (const DeviceLine& d : local) text += formatDeviceLine(d);
  std::vector<std::string> all;
#if CHORUS_PERF_HAVE_MPI
  if (useMpi_) all = mpiGatherText(text);
#endif
  if (envMode_) {
    // One rank per process: gather fixed-size records through Chorus itself.
    std::vector<char> mine(kDeviceRecord, 0);
    std::memcpy(mine.data(), text.data(), std::min(text.size(), kDeviceRecord - 1));
    std::vector<char> records(kDeviceRecord * static_cast<size_t>(nProcs_), 0);
    RankState self;
    self.rank = proc_;
    self.comm = comms_[0];
    checkChorus(chorusAllGather(mine.data(), records.data(), kDeviceRecord, chorusInt8, comms_[0], nullptr),
                "chorusAllGather (device lines)", self);
    for (int p = 0; p < nProcs_; ++p) all.emplace_back(records.data() + kDeviceRecord * static_cast<size_t>(p));
  }
  std::vector<DeviceLine> lines;
  for (const std::string& block : all) {
    size_t begin = 0;
    while (begin < block.size()) {
      size_t end = block.find('\n', begin);
      if (end == std::string::npos) end = block.size();
      DeviceLine d;
      if (parseDeviceLine(block.substr(begin, end - begin), &d)) lines.push_back(d);
      begin = end + 1;
    }
  }
  return lines;
}

void Launch::allocate() {
  const size_t bytes = std::max(opts_.maxBytes, kAlign);
  bool warned = false;
  bool registerWarned = false;
  threads_.resize(static_cast<size_t>(opts_.nThreads));
  for (int t = 0; t < opts_.nThreads; ++t) {
    ThreadContext& ctx = threads_[static_cast<size_t>(t)];
    ctx.thread = t;
    ctx.nranks = nranks_;
    ctx.opts = &opts_;
    ctx.coll = &coll_;
    for (int g = 0; g < opts_.nGpus; ++g) {
      const int local = t * opts_.nGpus + g;
      RankState r;
      r.rank = proc_ * perProc_ + local;
      if (!comms_.empty()) r.comm = comms_[static_cast<size_t>(local)];
      if (r.comm != nullptr && !opts_.streamNull) checkChorus(chorusStreamCreate(&r.stream), "chorusStreamCreate", r);
      const bool useChorus = opts_.registration == 1;
      r.send = allocBuffer(bytes, useChorus, &warned);
      r.recv = allocBuffer(bytes, useChorus, &warned);
      if (opts_.check > 0) r.expected = allocBuffer(bytes, false, &warned);
      if (useChorus && r.comm != nullptr) {
        for (Buffer* b : {&r.send, &r.recv}) {
          chorusResult_t res = chorusCommRegister(r.comm, b->ptr, b->bytes, &b->registration);
          if (res != chorusSuccess) {
            b->registration = nullptr;
            if (!registerWarned && proc_ == 0) {
              std::fprintf(stderr, "%s: warning: chorusCommRegister failed (%s); buffers stay unregistered\n",
                           coll_.programName, chorusGetErrorString(res));
            }
            registerWarned = true;
          }
        }
      }
      ctx.ranks.push_back(r);
    }
  }
}

void Launch::release() {
  for (ThreadContext& ctx : threads_) {
    for (RankState& r : ctx.ranks) {
      if (r.stream != nullptr) chorusStreamDestroy(r.stream);
      for (Buffer* b : {&r.send, &r.recv}) {
        if (b->registration != nullptr) chorusCommDeregister(r.comm, b->registration);
      }
      freeBuffer(&r.send);
      freeBuffer(&r.recv);
      freeBuffer(&r.expected);
    }
  }
  if (comms_.empty()) return;
  forEachConcurrently(perProc_, [&](int i) {
    RankState self;
    self.rank = proc_ * perProc_ + i;
    self.comm = comms_[static_cast<size_t>(i)];
    checkChorus(chorusCommFinalize(self.comm), "chorusCommFinalize", self);
  });
  for (chorusComm_t c : comms_) chorusCommDestroy(c);
  comms_.clear();
}

}  // namespace

Buffer allocBuffer(size_t bytes, bool useChorus, bool* warned) {
  Buffer b;
  b.bytes = (bytes + kAlign - 1) / kAlign * kAlign;
  if (useChorus) {
    chorusResult_t res = chorusMemAlloc(&b.ptr, b.bytes);
    if (res == chorusSuccess && reinterpret_cast<uintptr_t>(b.ptr) % kAlign == 0) {
      b.fromChorus = true;
    } else {
      if (res == chorusSuccess) chorusMemFree(b.ptr);
      if (!*warned) {
        std::fprintf(stderr, "warning: chorusMemAlloc failed (%s); using malloc for the buffers\n",
                     res == chorusSuccess ? "not 64-byte aligned" : chorusGetErrorString(res));
      }
      *warned = true;
      b.ptr = nullptr;
    }
  }
  if (b.ptr == nullptr) b.ptr = std::aligned_alloc(kAlign, b.bytes);
  if (b.ptr == nullptr) fatal("out of memory allocating " + std::to_string(b.bytes) + " bytes");
  std::memset(b.ptr, 0, b.bytes);  // touch every page before timing
  return b;
}

void freeBuffer(Buffer* b) {
  if (b->ptr == nullptr) return;
  if (b->fromChorus) {
    chorusMemFree(b->ptr);
  } else {
    std::free(b->ptr);
  }
  b->ptr = nullptr;
}

int runBenchmark(int argc, char** argv, const Collective& coll) {
  setlinebuf(stdout);
  // Under a launcher only the first process prints usage errors (every process exits with status 2).
  const char* rank = envOf({"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "CHORUS_RANK"});
  const bool quiet = rank != nullptr && std::atoi(rank) != 0;
  Options opts;
  const int status = parseOptions(argc, argv, quiet, &opts);
  if (status < 0) return kExitOk;  // -h
  if (status != kExitOk) return status;
  return Launch(opts, coll).run(&argc, &argv);
}

}  // namespace chorus::perf
