#include "core/init.h"

#include <mutex>
#include <thread>

#include "base/error.h"
#include "base/logging.h"
#include "base/params.h"
#include "chorus_build_config.h"
#include "core/api_guard.h"
#include "core/handle_registry.h"
#if CHORUS_BUILD_CUDA
#include "transport/cuda/cuda_util.h"
#endif

namespace chorus::core {

int resolveDevice(int device) {
#if CHORUS_BUILD_CUDA  // devices are accepted when a GPU is visible
  std::string why;
  const int visible = transport::cuda::visibleDevices(&why);
  if (device == CHORUS_DEVICE_AUTO) return visible > 0 ? transport::cuda::currentDevice() : CHORUS_DEVICE_HOST;
  if (device >= 0) {
    CHORUS_CHECK_USAGE(visible > 0, "CUDA device ", device, " requested, but no CUDA device is visible: ", why);
    CHORUS_CHECK_ARG(device < visible, "CUDA device ", device, " requested, but only ", visible, " are visible");
    return device;
  }
#endif
  if (device == CHORUS_DEVICE_AUTO || device == CHORUS_DEVICE_HOST) return CHORUS_DEVICE_HOST;
  CHORUS_THROW(Status::kInvalidUsage, "CUDA device ", device,
               " requested, but this library has no CUDA executor for it (host communicators only: use "
               "CHORUS_DEVICE_HOST or a NULL devlist)");
}

namespace {

// Runs the set-up and records the outcome in the communicator (for non-blocking init). A rank whose set-up
// fails once the bootstrap is up tells its peers why: a peer that finished its own set-up and waits on this
// rank then fails naming the first cause (say, a third rank that died), not just this rank's departure. Its own
// message names that first cause too when a peer's notice gives it, and what dead local peers left in /dev/shm
// is removed.
void finishSetUp(Comm* comm, std::unique_ptr<bootstrap::Bootstrap> b) {
  try {
    comm->setUp(std::move(b));
  } catch (const Error& e) {
    comm->sweepDeadLocalPeers(true);
    const Failure f = comm->withFirstCause(e.status(), e.what());
    comm->announceFailure(f.status,
                          "rank " + std::to_string(comm->rank()) + " failed to create the communicator: " + f.message);
    f.raise();
  }
  comm->setInitResult(Status::kSuccess);
}

}  // namespace

void showVersion(int rank) {
  static std::once_flag once;
  const LogLevel level = logLevel();
  if (level == LogLevel::kNone || (level <= LogLevel::kWarn && rank != 0)) return;
  std::call_once(once, [level] {
    std::string line =
        detail::concat("Chorus version ", CHORUS_MAJOR, ".", CHORUS_MINOR, ".", CHORUS_PATCH, CHORUS_SUFFIX,
                       CHORUS_BUILD_CUDA ? "+cuda" CHORUS_BUILD_CUDA_VERSION : "", " (NCCL ", CHORUS_NCCL_API_MAJOR,
                       ".", CHORUS_NCCL_API_MINOR, ".", CHORUS_NCCL_API_PATCH, " API)");
    logLine(level <= LogLevel::kWarn ? LogLevel::kVersion : LogLevel::kInfo, kAll, line);
  });
}

Comm* initRank(const bootstrap::UniqueId& id, int nranks, int rank, const CommOptions& options, bool async) {
  // Each new communicator sees the environment as it is now (tests and tools change it between creations).
  param::reload();
  showVersion(rank);
  auto comm = std::make_unique<Comm>(rank, nranks, options);
  if (options.blocking && !async) {
    LogRankScope logRank(rank);
    WaitContext ctx = comm->waitContext("joining the communicator");
    finishSetUp(comm.get(), bootstrap::Bootstrap::init(id, rank, nranks, ctx));
    commHandles().add(comm.get());
    return comm.release();
  }
  Comm* raw = comm.release();
  commHandles().add(raw);
  raw->setInitThread(std::thread([raw, id, nranks, rank] {
    LogRankScope logRank(rank);
    try {
      WaitContext ctx = raw->waitContext("joining the communicator");
      finishSetUp(raw, bootstrap::Bootstrap::init(id, rank, nranks, ctx));
    } catch (const Error& e) {
      recordLastError(raw, std::string("chorusCommInitRankConfig: ") + e.what());
      raw->setInitResult(e.status());
    } catch (const std::exception& e) {
      recordLastError(raw, std::string("chorusCommInitRankConfig: ") + e.what());
      raw->setInitResult(Status::kInternalError);
    }
  }));
  return raw;
}

Comm* initFromBootstrap(std::unique_ptr<bootstrap::Bootstrap> b, const CommOptions& options) {
  auto comm = std::make_unique<Comm>(b->rank(), b->nranks(), options);
  finishSetUp(comm.get(), std::move(b));
  commHandles().add(comm.get());
  return comm.release();
}

std::vector<Comm*> initInProcess(const std::vector<int>& devices, const CommOptions& options) {
  param::reload();
  showVersion(0);
  const int n = static_cast<int>(devices.size());
  std::vector<std::unique_ptr<bootstrap::Bootstrap>> boots = bootstrap::makeInProcessBootstraps(n);
  // Every rank must take part in the set-up's exchanges at once: one thread per rank.
  std::vector<Comm*> made(n, nullptr);
  std::vector<std::string> errors(n);
  std::vector<Status> status(n, Status::kSuccess);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        CommOptions mine = options;
        mine.device = resolveDevice(devices[r]);
        made[r] = initFromBootstrap(std::move(boots[r]), mine);
      } catch (const Error& e) {
        status[r] = e.status();
        errors[r] = e.what();
      } catch (const std::exception& e) {
        status[r] = Status::kInternalError;
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    if (status[r] == Status::kSuccess) continue;
    for (Comm* c : made) {
      if (c == nullptr) continue;
      commHandles().remove(c);
      delete c;  // no operation ran on it, and every rank's set-up has ended
    }
    CHORUS_THROW(status[r], "rank ", r, ": ", errors[r]);
  }
  return made;
}

}  // namespace chorus::core
