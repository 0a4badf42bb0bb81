// C API: version, errors, communicator life cycle and queries.
#include <algorithm>
#include <cstring>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/logging.h"
#include "base/shm.h"
#include "base/socket.h"
#include "chorus/chorus.h"
#include "core/api_guard.h"
#include "core/comm.h"
#include "core/config.h"
#include "core/env_launch.h"
#include "core/failed_ranks.h"
#include "core/group.h"
#include "core/handle_registry.h"
#include "core/init.h"
#include "core/job_rendezvous.h"
#include "core/red_ops.h"
#include "core/trace.h"

using chorus::Status;
using chorus::core::apiGuard;
using chorus::core::checkComm;
using chorus::core::Comm;
using chorus::core::CommOptions;

namespace {

chorus::bootstrap::UniqueId decodeId(const chorusUniqueId& id) {
  return chorus::bootstrap::decodeUniqueId(reinterpret_cast<const uint8_t*>(id.internal));
}

// The rest of InitRankConfig and InitRankScalable, once the id is known. Inside a group the init is NCCL's
// deferred one: it starts now on a thread and the outermost chorusGroupEnd waits for it, so that one thread
// may create several ranks of one communicator between chorusGroupStart and chorusGroupEnd.
chorusResult_t initWithId(chorusComm_t* comm, int nranks, const chorus::bootstrap::UniqueId& id, int rank,
                          chorusConfig_t* config) {
  CommOptions options = chorus::core::resolveOptions(config);
  options.device = chorus::core::resolveDevice(options.device);
  const bool grouped = chorus::core::inGroup();
  Comm* c = chorus::core::initRank(id, nranks, rank, options, grouped);
  if (grouped) chorus::core::deferInit(c);
  *comm = reinterpret_cast<chorusComm_t>(c);
  return options.blocking ? chorusSuccess : chorusInProgress;
}

void checkRankArgs(chorusComm_t* comm, int nranks, int rank) {
  CHORUS_CHECK_ARG(comm != nullptr, "comm (the output pointer) is NULL");
  CHORUS_CHECK_ARG(nranks >= 1, "nranks must be >= 1, not ", nranks);
  CHORUS_CHECK_ARG(rank >= 0 && rank < nranks, "rank ", rank, " is outside [0, nranks=", nranks, ")");
}

// How long chorusCommDestroy lets work still in flight finish (a host stream's queued operations, sends a live
// peer has not consumed yet) before it gives up on it: destroy frees local resources promptly and does not wait
// for other ranks; chorusCommFinalize is the call that waits for completion and reports what could not complete.
constexpr int64_t kDestroyFlushMs = 2000;

// Frees a communicator. A healthy one first lets in-flight work finish (at most kDestroyFlushMs; a dead peer
// ends that at once); a failed, aborted or revoked one, or work that did not finish, is aborted, and the peers
// waiting on it are told.
void destroyComm(Comm* c) {
  c->joinInitThread();
  chorus::core::commHandles().remove(c);
  chorus::core::forgetRedOps(c);
  const bool created = c->initResult() == Status::kSuccess;
  bool healthy =
      created && !c->aborted() && (c->asyncError() == Status::kSuccess || c->asyncError() == Status::kInvalidUsage);
  if (healthy) {
    chorus::WaitContext ctx = c->waitContext("destroying the communicator");
    ctx.deadline = ctx.deadline.min(chorus::Deadline::afterMs(kDestroyFlushMs));
    try {
      c->waitIdle(ctx);
      c->drainSends(ctx);
    } catch (const chorus::Error& e) {
      CHORUS_LOG_INFO(kInit, "chorusCommDestroy: work still in flight is abandoned: ", e.what());
      healthy = false;
    }
  }
  if (!healthy) {
    // The first error, taken before the abort makes work still queued fail too.
    const std::string first = c->firstAsyncError();
    const std::string cause = first.empty() ? c->lastError() : first;
    c->abort();  // pending work stops at its next wait
    c->poisonConnections();
    if (created) {
      c->announceFailure(c->asyncError() == Status::kSuccess ? Status::kRemoteError : c->asyncError(),
                         "rank " + std::to_string(c->rank()) + " destroyed or aborted the communicator" +
                             (cause.empty() ? "" : " after: " + cause));
    }
    chorus::WaitContext ctx;
    ctx.deadline = chorus::Deadline::afterMs(10000);  // aborted waits end at once; this bounds a bug
    try {
      c->waitIdle(ctx);
    } catch (const chorus::Error&) {
    }
  }
  // Segments that dead peers on this host created and no one mapped (they died during connection set-up).
  c->sweepDeadLocalPeers(true);
  if (c->tracing()) chorus::core::flushTrace();
  chorus::core::commHandles().retire(c);  // its address is never reused: a stale handle stays invalid
}

// A split's exchange over the parent's bootstrap and the child's creation: every rank learns every (color, key);
// the members of my color, sorted by (key, parent rank), form the child. NULL for CHORUS_SPLIT_NOCOLOR.
chorusComm_t splitComm(Comm* parent, int color, int key, const CommOptions& options) {
  struct Entry {
    int32_t color, key, rank;
  };
  std::vector<Entry> all(parent->nranks());
  all[parent->rank()] = {color, key, parent->rank()};
  uint64_t tag = parent->nextChildTag();
  chorus::WaitContext ctx = parent->waitContext("chorusCommSplit exchange");
  if (parent->revoked()) ctx.abort = nullptr;  // a revoked communicator may still be split
  parent->bootstrap().allgather(all.data(), sizeof(Entry), ctx);
  if (color == CHORUS_SPLIT_NOCOLOR) return nullptr;
  std::vector<Entry> mine;
  for (const Entry& e : all) {
    if (e.color == color) mine.push_back(e);
  }
  std::stable_sort(mine.begin(), mine.end(),
                   [](const Entry& a, const Entry& b) { return a.key != b.key ? a.key < b.key : a.rank < b.rank; });
  std::vector<int> members;
  for (const Entry& e : mine) members.push_back(e.rank);
  auto child = parent->bootstrap().subset(members, (tag << 32) ^ static_cast<uint32_t>(color));
  return reinterpret_cast<chorusComm_t>(chorus::core::initFromBootstrap(std::move(child), options));
}

// A shrink's child: the ranks of parent not excluded, in their order; only they call it.
chorusComm_t shrinkComm(Comm* parent, const std::vector<bool>& excluded, const CommOptions& options) {
  std::vector<int> members;
  uint64_t h = 0;
  for (int r = 0; r < parent->nranks(); ++r) {
    if (!excluded[r])
      members.push_back(r);
    else
      h = h * 1315423911u + static_cast<uint64_t>(r) + 1;
  }
  uint64_t tag = (parent->nextChildTag() << 32) ^ (h & 0xffffffffu) ^ 0x5348524bull;  // "SHRK"
  return reinterpret_cast<chorusComm_t>(
      chorus::core::initFromBootstrap(parent->bootstrap().subset(members, tag), options));
}

}  // namespace

extern "C" {

chorusResult_t chorusGetVersion(int* version) {
  return apiGuard("chorusGetVersion", nullptr, [&] {
    CHORUS_CHECK_ARG(version != nullptr, "version is NULL");
    *version = CHORUS_VERSION_CODE;
    return chorusSuccess;
  });
}

const char* chorusGetErrorString(chorusResult_t result) {
  switch (result) {
    case chorusSuccess: return "no error";
    case chorusUnhandledCudaError: return "unhandled cuda error (run with CHORUS_DEBUG=INFO for details)";
    case chorusSystemError: return "unhandled system error (run with CHORUS_DEBUG=INFO for details)";
    case chorusInternalError: return "internal error - please report this issue to the Chorus developers";
    case chorusInvalidArgument: return "invalid argument (run with CHORUS_DEBUG=WARN for details)";
    case chorusInvalidUsage: return "invalid usage (run with CHORUS_DEBUG=WARN for details)";
    case chorusRemoteError: return "remote process exited or there was a network error";
    case chorusInProgress: return "Chorus operation in progress";
    case chorusTimeout: return "operation did not complete before the deadline (CHORUS_TIMEOUT_MS)";
    default: return "unknown result code";
  }
}

const char* chorusGetLastError(chorusComm_t comm) {
  // Every error of a call on a communicator, and of its asynchronous work, is recorded in it as it happens:
  // its record is its latest error. A destroyed (or foreign) handle gets the thread's, as NULL does. Each
  // argument has its own copy per thread, so a pointer stays valid until the thread asks again about the
  // same communicator (or NULL), whatever else it calls in between.
  thread_local std::unordered_map<const void*, std::string> held;
  const bool live = comm != nullptr && chorus::core::commHandles().contains(comm);
  std::string msg = live ? reinterpret_cast<Comm*>(comm)->lastError() : chorus::core::threadLastError();
  if (held.size() >= 64 && held.count(comm) == 0) {
    std::erase_if(
        held, [&](const auto& kv) { return kv.first != nullptr && !chorus::core::commHandles().contains(kv.first); });
  }
  std::string& slot = held[comm];
  slot = std::move(msg);
  return slot.c_str();
}

void chorusResetDebugInit(void) {
  chorus::resetLogging();
}

chorusResult_t chorusGetUniqueId(chorusUniqueId* uniqueId) {
  return apiGuard("chorusGetUniqueId", nullptr, [&] {
    CHORUS_CHECK_ARG(uniqueId != nullptr, "uniqueId is NULL");
    chorus::bootstrap::UniqueId id = chorus::bootstrap::createUniqueId();
    memset(uniqueId, 0, sizeof(*uniqueId));
    chorus::bootstrap::encodeUniqueId(id, reinterpret_cast<uint8_t*>(uniqueId->internal));
    return chorusSuccess;
  });
}

chorusResult_t chorusCommInitRankConfig(chorusComm_t* comm, int nranks, chorusUniqueId commId, int rank,
                                        chorusConfig_t* config) {
  return apiGuard("chorusCommInitRankConfig", nullptr, [&] {
    if (comm != nullptr) *comm = nullptr;
    checkRankArgs(comm, nranks, rank);
    return initWithId(comm, nranks, decodeId(commId), rank, config);
  });
}

chorusResult_t chorusCommInitRankScalable(chorusComm_t* newcomm, int nranks, int myrank, int nId,
                                          chorusUniqueId* commIds, chorusConfig_t* config) {
  return apiGuard("chorusCommInitRankScalable", nullptr, [&] {
    if (newcomm != nullptr) *newcomm = nullptr;
    checkRankArgs(newcomm, nranks, myrank);
    CHORUS_CHECK_ARG(nId >= 1 && nId <= nranks, "nId must be in [1, nranks=", nranks, "], not ", nId);
    CHORUS_CHECK_ARG(commIds != nullptr, "commIds is NULL");
    // One rendezvous is enough for Chorus (it exchanges only endpoint addresses): every rank meets at the
    // first id. The others must still be ids, as every rank passes the same list.
    for (int i = 1; i < nId; ++i) decodeId(commIds[i]);
    return initWithId(newcomm, nranks, decodeId(commIds[0]), myrank, config);
  });
}

chorusResult_t chorusCommInitRank(chorusComm_t* comm, int nranks, chorusUniqueId commId, int rank) {
  return chorusCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

chorusResult_t chorusCommInitAll(chorusComm_t* comms, int ndev, const int* devlist) {
  return apiGuard("chorusCommInitAll", nullptr, [&] {
    CHORUS_CHECK_ARG(comms != nullptr, "comms is NULL");
    CHORUS_CHECK_ARG(ndev >= 1, "ndev must be >= 1, not ", ndev);
    std::vector<int> devices(ndev, CHORUS_DEVICE_HOST);
    for (int i = 0; devlist != nullptr && i < ndev; ++i) {
      CHORUS_CHECK_ARG(devlist[i] >= 0 || devlist[i] == CHORUS_DEVICE_HOST, "devlist[", i, "] = ", devlist[i],
                       " is neither a CUDA device index nor CHORUS_DEVICE_HOST");
      CHORUS_CHECK_ARG((devlist[i] >= 0) == (devlist[0] >= 0),
                       "devlist mixes host ranks (CHORUS_DEVICE_HOST) and "
                       "CUDA devices: devlist[0] = ",
                       devlist[0], ", devlist[", i, "] = ", devlist[i]);
      devices[i] = devlist[i];
      chorus::core::resolveDevice(devices[i]);  // an unusable device fails here, before any rank starts
    }
    std::vector<Comm*> made = chorus::core::initInProcess(devices, chorus::core::resolveOptions(nullptr));
    for (int r = 0; r < ndev; ++r) comms[r] = reinterpret_cast<chorusComm_t>(made[r]);
    return chorusSuccess;
  });
}

chorusResult_t chorusCommInitFromEnv(chorusComm_t* comm, chorusConfig_t* config) {
  return apiGuard("chorusCommInitFromEnv", nullptr, [&] {
    CHORUS_CHECK_ARG(comm != nullptr, "comm (the output pointer) is NULL");
    *comm = nullptr;
    CommOptions options = chorus::core::resolveOptions(config);
    options.device = chorus::core::resolveDevice(options.device);
    chorus::core::LaunchInfo info = chorus::core::readLaunchInfo();
    chorus::bootstrap::UniqueId id;
    const std::string& file = info.rendezvousFile;
    if (!file.empty()) {
      chorus::WaitContext ctx;
      ctx.deadline = chorus::Deadline::afterMs(options.timeoutMs);
      ctx.what = "rank " + std::to_string(info.rank) + ": chorusCommInitFromEnv";
      id = info.rank == 0 ? chorus::core::publishJobId(file) : chorus::core::awaitJobId(file, ctx);
    } else {
      chorus::SocketAddress addr = chorus::SocketAddress::parse(info.addr, -1, info.addrSource.c_str());
      id = info.rank == 0 ? chorus::bootstrap::serveRendezvousAt(addr, info.secretHex)
                          : chorus::bootstrap::rendezvousIdFor(addr, info.secretHex);
    }
    Comm* c = chorus::core::initRank(id, info.size, info.rank, options);
    // Every rank has joined once a blocking init returns: the file has served.
    if (!file.empty() && info.rank == 0 && options.blocking) chorus::core::retractJobId(file);
    *comm = reinterpret_cast<chorusComm_t>(c);
    return options.blocking ? chorusSuccess : chorusInProgress;
  });
}

chorusResult_t chorusCommSplit(chorusComm_t comm, int color, int key, chorusComm_t* newcomm, chorusConfig_t* config) {
  return apiGuard("chorusCommSplit", nullptr, [&] {
    Comm* parent = checkComm(comm);
    CHORUS_CHECK_ARG(newcomm != nullptr, "newcomm is NULL");
    *newcomm = nullptr;
    CHORUS_CHECK_ARG(color >= 0 || color == CHORUS_SPLIT_NOCOLOR, "color must be >= 0 or CHORUS_SPLIT_NOCOLOR, not ",
                     color);
    const CommOptions options = chorus::core::resolveOptions(config, &parent->options());
    // Inside a group, NCCL's deferred split: *newcomm stays NULL until the outermost chorusGroupEnd makes it.
    if (chorus::core::inGroup()) {
      chorus::core::deferCreation(parent, "chorusCommSplit",
                                  [=] { *newcomm = splitComm(parent, color, key, options); });
    } else {
      *newcomm = splitComm(parent, color, key, options);
    }
    return chorusSuccess;
  });
}

chorusResult_t chorusCommShrink(chorusComm_t comm, int* excludeRanksList, int excludeRanksCount, chorusComm_t* newcomm,
                                chorusConfig_t* config, int shrinkFlags) {
  return apiGuard("chorusCommShrink", nullptr, [&] {
    Comm* parent = checkComm(comm);
    CHORUS_CHECK_ARG(newcomm != nullptr, "newcomm is NULL");
    *newcomm = nullptr;
    CHORUS_CHECK_ARG(excludeRanksCount >= 0, "excludeRanksCount must be >= 0");
    CHORUS_CHECK_ARG(excludeRanksCount == 0 || excludeRanksList != nullptr, "excludeRanksList is NULL");
    CHORUS_CHECK_ARG(shrinkFlags == CHORUS_SHRINK_DEFAULT || shrinkFlags == CHORUS_SHRINK_ABORT,
                     "shrinkFlags must be CHORUS_SHRINK_DEFAULT or CHORUS_SHRINK_ABORT");
    std::vector<bool> excluded(parent->nranks(), false);
    for (int i = 0; i < excludeRanksCount; ++i) {
      int r = excludeRanksList[i];
      CHORUS_CHECK_ARG(r >= 0 && r < parent->nranks(), "excludeRanksList[", i, "] = ", r, " is not a rank");
      excluded[r] = true;
    }
    CHORUS_CHECK_USAGE(!excluded[parent->rank()], "the calling rank is in excludeRanksList");
    if (shrinkFlags == CHORUS_SHRINK_ABORT) parent->abort();
    const CommOptions options = chorus::core::resolveOptions(config, &parent->options());
    // Inside a group, deferred to the outermost chorusGroupEnd as NCCL does (as chorusCommSplit).
    if (chorus::core::inGroup()) {
      chorus::core::deferCreation(parent, "chorusCommShrink",
                                  [=] { *newcomm = shrinkComm(parent, excluded, options); });
    } else {
      *newcomm = shrinkComm(parent, excluded, options);
    }
    return chorusSuccess;
  });
}

chorusResult_t chorusCommGetFailedRanks(chorusComm_t comm, int* ranks, int* nranks) {
  return apiGuard("chorusCommGetFailedRanks", nullptr, [&] {
    Comm* c = checkComm(comm);
    CHORUS_CHECK_ARG(ranks != nullptr, "ranks is NULL");
    CHORUS_CHECK_ARG(nranks != nullptr, "nranks is NULL");
    *nranks = 0;
    c->joinInitThread();
    CHORUS_CHECK_USAGE(c->initResult() == Status::kSuccess, "the communicator was not created successfully");
    std::vector<int> failed = chorus::core::agreeOnFailedRanks(*c);
    std::copy(failed.begin(), failed.end(), ranks);
    *nranks = static_cast<int>(failed.size());
    return chorusSuccess;
  });
}

chorusResult_t chorusCommFinalize(chorusComm_t comm) {
  return apiGuard("chorusCommFinalize", nullptr, [&] {
    Comm* c = checkComm(comm);
    c->joinInitThread();
    CHORUS_CHECK_USAGE(c->initResult() == Status::kSuccess, "the communicator was not created successfully");
    CHORUS_CHECK_USAGE(!c->revoked(),
                       "the communicator was revoked: destroy it (chorusCommFinalize is invalid after "
                       "chorusCommRevoke)");
    try {
      c->waitIdle(c->waitContext("chorusCommFinalize waiting for pending work"));
      c->drainSends(c->waitContext("chorusCommFinalize flushing sends"));
    } catch (const chorus::Error& e) {
      // Recorded in the communicator: the notice its destruction sends names this first cause. Where this
      // rank's own work already failed, that failure is the cause: what the flush hits next (a peer that closed
      // its end after hearing of it) names no one, and the peers' notices may name this rank only (fault_test
      // finalize_kill_4ranks_shm failed 2 in 40 runs that way: rank 0 saw rank 3 exit, then its flush found rank
      // 1's end closed).
      const std::string first = c->firstAsyncError();
      const chorus::Failure f = !first.empty() && c->asyncError() != Status::kInvalidUsage
                                    ? chorus::Failure{e.status(), std::string(e.what()) + " (after: " + first + ")"}
                                    : c->withFirstCause(e.status(), e.what());
      c->recordAsyncError(f.status, "chorusCommFinalize: " + f.message);
      f.raise();
    }
    if (c->asyncError() != Status::kSuccess) return chorus::core::toResult(c->asyncError());
    return chorusSuccess;
  });
}

chorusResult_t chorusCommDestroy(chorusComm_t comm) {
  return apiGuard("chorusCommDestroy", nullptr, [&] {
    if (comm == nullptr) return chorusSuccess;
    destroyComm(checkComm(comm));
    return chorusSuccess;
  });
}

chorusResult_t chorusCommAbort(chorusComm_t comm) {
  return apiGuard("chorusCommAbort", nullptr, [&] {
    if (comm == nullptr) return chorusSuccess;
    Comm* c = checkComm(comm);
    c->abort();
    if (c->recorder() != nullptr) c->recorder()->dump("chorusCommAbort");
    if (c->initResult() == Status::kSuccess)
      c->announceFailure(Status::kRemoteError,
                         "rank " + std::to_string(c->rank()) + " aborted the communicator (chorusCommAbort)");
    destroyComm(c);
    return chorusSuccess;
  });
}

chorusResult_t chorusCommRevoke(chorusComm_t comm, int revokeFlags) {
  return apiGuard("chorusCommRevoke", nullptr, [&] {
    Comm* c = checkComm(comm);
    CHORUS_CHECK_ARG(revokeFlags == CHORUS_REVOKE_DEFAULT, "revokeFlags must be CHORUS_REVOKE_DEFAULT (0), not ",
                     revokeFlags);
    c->joinInitThread();
    // Every wait on the communicator now ends with "revoked". Revoking is local, as NCCL's: peers waiting on
    // this rank see it when they revoke their own communicator (or at their deadline).
    c->revoke();
    chorus::WaitContext ctx = c->waitContext("chorusCommRevoke waiting for pending operations to stop");
    ctx.abort = nullptr;  // set by revoke(): the wait would end at once
    c->waitIdle(ctx);
    return chorusSuccess;
  });
}

chorusResult_t chorusCommGetAsyncError(chorusComm_t comm, chorusResult_t* asyncError) {
  return apiGuard("chorusCommGetAsyncError", nullptr, [&] {
    Comm* c = checkComm(comm);
    CHORUS_CHECK_ARG(asyncError != nullptr, "asyncError is NULL");
    Status init = c->initResult();
    if (init != Status::kSuccess) {
      *asyncError = chorus::core::toResult(init);
    } else if (c->asyncError() != Status::kSuccess) {
      *asyncError = chorus::core::toResult(c->asyncError());
    } else if (!c->options().blocking && c->pendingOps() > 0) {
      *asyncError = chorusInProgress;
    } else {
      *asyncError = chorusSuccess;
    }
    return chorusSuccess;
  });
}

chorusResult_t chorusCommCount(const chorusComm_t comm, int* count) {
  return apiGuard("chorusCommCount", nullptr, [&] {
    Comm* c = checkComm(comm);
    CHORUS_CHECK_ARG(count != nullptr, "count is NULL");
    *count = c->nranks();
    return chorusSuccess;
  });
}

chorusResult_t chorusCommCuDevice(const chorusComm_t comm, int* device) {
  return apiGuard("chorusCommCuDevice", nullptr, [&] {
    Comm* c = checkComm(comm);
    CHORUS_CHECK_ARG(device != nullptr, "device is NULL");
    *device = c->device();
    return chorusSuccess;
  });
}

chorusResult_t chorusCommDevice(const chorusComm_t comm, int* device) {
  return chorusCommCuDevice(comm, device);
}

chorusResult_t chorusCommUserRank(const chorusComm_t comm, int* rank) {
  return apiGuard("chorusCommUserRank", nullptr, [&] {
    Comm* c = checkComm(comm);
    CHORUS_CHECK_ARG(rank != nullptr, "rank is NULL");
    *rank = c->rank();
    return chorusSuccess;
  });
}

}  // extern "C"
