#include "core/group.h"

#include <algorithm>
#include <map>
#include <thread>
#include <vector>

#include "base/error.h"
#include "chorus_build_config.h"
#include "collectives/tuning.h"
#include "core/comm.h"
#include "core/host_stream.h"
#include "core/launch.h"
#if CHORUS_BUILD_CUDA
#include "core/device_launch.h"
#endif

namespace chorus::core {

namespace {

struct PendingCall {
  Comm* comm;
  CallStream stream;
  coll::CollOp op;
};

struct Creation {
  Comm* parent;
  const char* api;
  std::function<void()> create;
};

struct GroupState {
  int depth = 0;
  std::vector<PendingCall> calls;
  std::vector<Comm*> inits;         // communicators created inside the group (deferInit)
  std::vector<Creation> creations;  // split and shrink inside the group (deferCreation)
  Status firstError = Status::kSuccess;
  std::string firstMessage;
};

thread_local GroupState group;

// The flight recorders' time for one launch: the clock is read once, when first needed, for all its operations.
struct LaunchTime {
  int64_t us = -1;
  int64_t get() {
    if (us < 0) us = FlightRecorder::nowUs();
    return us;
  }
};

// Queues a launch of n operations of a host communicator: counts them as pending (finalize and destroy wait for them),
// gives each its flight-recorder number (`running`: they run now, on this thread; FlightRecorder::queued) and returns
// the launch's ticket in the communicator's issue order (Comm::takeTicket).
uint32_t markQueued(Comm* comm, coll::CollOp* ops, size_t n, bool running, LaunchTime& time) {
  comm->opsEnqueued(static_cast<int>(n));
  if (FlightRecorder* fr = comm->recorder(); fr != nullptr && fr->enabled()) {
    for (size_t i = 0; i < n; ++i) ops[i].recordSeq = fr->queued(ops[i], running, time.get());
  }
  return comm->takeTicket();
}

// Makes `launch` one work of n operations of one host communicator that run at once on this thread, reusing its
// storage (a warm launch allocates nothing). opAt(i) is the i-th operation in issue order.
template <typename OpAt>
void fillOneWork(std::vector<CommWork>& launch, Comm* comm, size_t n, OpAt opAt) {
  launch.resize(1);
  CommWork& w = launch[0];
  w.comm = comm;
  w.ops.clear();
  w.startedWhenQueued = true;
  for (size_t i = 0; i < n; ++i) w.ops.push_back(opAt(i));
  LaunchTime time;
  w.ticket = markQueued(comm, w.ops.data(), n, /*running=*/true, time);
}

// Runs n operations of one host communicator on the NULL stream, here, in a work that is reused.
template <typename OpAt>
void runBlockingWork(Comm* comm, size_t n, OpAt opAt) {
  thread_local std::vector<CommWork> works;
  fillOneWork(works, comm, n, opAt);
  const Failure f = executeLaunch(works);
  if (!f.ok()) f.raise();
}

// A launch being built for one stream: works [0, n) are in use; those beyond keep their storage for later groups.
struct StreamLaunch {
  HostStream* stream = nullptr;  // nullptr: the NULL stream
  std::vector<CommWork> works;
  size_t n = 0;
  // The work of `comm`, started (empty) on its first call.
  CommWork& workOf(Comm* comm) {
    for (size_t i = 0; i < n; ++i) {
      if (works[i].comm == comm) return works[i];
    }
    if (n == works.size()) works.emplace_back();
    CommWork& w = works[n++];
    w.comm = comm;
    w.ops.clear();
    w.startedWhenQueued = false;
    return w;
  }
};

// Whether the calls make one work on the NULL stream: host calls of one communicator, none on a host stream.
bool oneBlockingWork(const std::vector<PendingCall>& calls) {
  if (calls.empty()) return false;
  for (const PendingCall& c : calls) {
    if (c.comm != calls[0].comm || c.stream.host != nullptr || c.comm->device() >= 0) return false;
  }
  return true;
}

// Launches the calls: one launch per stream, each holding one work per communicator (ops in issue order).
// Enqueued launches return at once; the NULL stream's launch runs here, after the others are enqueued (they
// may be the peers it waits for).
void launch(const std::vector<PendingCall>& allCalls) {
#if CHORUS_BUILD_CUDA  // calls of CUDA communicators go to the device path, on their cudaStream_t
  const bool anyDevice =
      std::any_of(allCalls.begin(), allCalls.end(), [](const PendingCall& c) { return c.comm->device() >= 0; });
  std::vector<PendingCall> hostCalls;  // only filled when the group mixes both kinds
  if (anyDevice) {
    std::vector<DeviceCall> deviceCalls;
    for (const PendingCall& c : allCalls) {
      if (c.comm->device() >= 0) {
        deviceCalls.push_back(DeviceCall{c.comm, c.stream.cuda, c.op});
      } else {
        hostCalls.push_back(c);
      }
    }
    launchDeviceCalls(deviceCalls);
    if (hostCalls.empty()) return;
  }
  const std::vector<PendingCall>& calls = anyDevice ? hostCalls : allCalls;
#else
  const std::vector<PendingCall>& calls = allCalls;
#endif
  if (oneBlockingWork(calls)) {
    // The common group: a send and a receive, or a few collectives, of one communicator on the NULL stream.
    runBlockingWork(calls[0].comm, calls.size(), [&](size_t i) { return calls[i].op; });
    return;
  }
  // One launch per stream, in the order the streams first appear; the NULL stream's runs here after the others
  // are enqueued. Kept per thread with their storage (enqueue hands back a launch that has run), so a warm group
  // allocates nothing.
  thread_local std::vector<StreamLaunch> byStream;
  size_t nStreams = 0;
  LaunchTime time;
  for (const PendingCall& c : calls) {
    StreamLaunch* l = nullptr;
    for (size_t i = 0; i < nStreams && l == nullptr; ++i) {
      if (byStream[i].stream == c.stream.host) l = &byStream[i];
    }
    if (l == nullptr) {
      if (nStreams == byStream.size()) byStream.emplace_back();
      l = &byStream[nStreams++];
      l->stream = c.stream.host;
      l->n = 0;
    }
    l->workOf(c.comm).ops.push_back(c.op);
  }
  // A host communicator's operations of one group use one stream: on several, its works would run at once on different
  // threads over the same connections (tickets order a communicator's launches, not the works of one).
  thread_local std::vector<Comm*> seen;
  seen.clear();
  for (size_t i = 0; i < nStreams; ++i) {
    for (size_t k = 0; k < byStream[i].n; ++k) {
      Comm* comm = byStream[i].works[k].comm;
      CHORUS_CHECK_USAGE(std::find(seen.begin(), seen.end(), comm) == seen.end(),
                         "the group puts operations of one communicator (rank ", comm->rank(),
                         ") on more than one stream: a group's operations of a host communicator must use one stream");
      seen.push_back(comm);
    }
  }
  // Nothing was queued until here.
  for (size_t i = 0; i < nStreams; ++i) {
    for (size_t k = 0; k < byStream[i].n; ++k) {
      CommWork& w = byStream[i].works[k];
      w.ticket = markQueued(w.comm, w.ops.data(), w.ops.size(), /*running=*/false, time);
    }
  }
  StreamLaunch* blocking = nullptr;
  for (size_t i = 0; i < nStreams; ++i) {
    StreamLaunch& l = byStream[i];
    l.works.resize(l.n);
    if (l.stream == nullptr) {
      blocking = &l;
    } else if (l.n == 1 && l.works[0].ops.size() <= HostStream::kInlineOps) {
      l.stream->enqueue(l.works[0].comm, l.works[0].ops.data(), l.works[0].ops.size(),  // a send/recv pair, say
                        l.works[0].ticket);
    } else {
      l.stream->enqueue(l.works);
    }
  }
  if (blocking == nullptr) return;
  const Failure f = executeLaunch(blocking->works);
  if (!f.ok()) f.raise();
}

}  // namespace

bool inGroup() {
  return group.depth > 0;
}

void submit(Comm* comm, CallStream stream, const coll::CollOp& op) {
  GroupState& g = group;  // one look-up of the thread's state (a call into the dynamic linker in a shared library)
  if (g.depth > 0) {
    g.calls.push_back(PendingCall{comm, stream, op});
    return;
  }
  if (comm->device() < 0) {
    // One call of a host communicator outside a group: its launch is one work of one operation, with no
    // per-stream sorting to do.
    if (stream.host != nullptr) {
      coll::CollOp queued = op;
      LaunchTime time;
      const uint32_t ticket = markQueued(comm, &queued, 1, /*running=*/false, time);
      stream.host->enqueue(comm, &queued, 1, ticket);  // held in its queue slot: no storage to allocate or hand over
      return;
    }
    runBlockingWork(comm, 1, [&](size_t) { return op; });  // the common blocking call
    return;
  }
  launch({PendingCall{comm, stream, op}});
}

void groupStart() {
  ++group.depth;
}

void deferInit(Comm* comm) {
  group.inits.push_back(comm);
}

void deferCreation(Comm* parent, const char* api, std::function<void()> create) {
  group.creations.push_back(Creation{parent, api, std::move(create)});
}

namespace {

// Runs the creations deferred in a group: one thread per parent communicator (the last on the calling thread), its
// creations in issue order, since they take turns on its bootstrap as the ranks' calls must match. Returns the
// first failure (its message, naming the call, in *error), else kSuccess.
Status runCreations(const std::vector<Creation>& creations, std::string* error) {
  if (creations.empty()) return Status::kSuccess;
  std::vector<Comm*> parents;
  for (const Creation& c : creations) {
    if (std::find(parents.begin(), parents.end(), c.parent) == parents.end()) parents.push_back(c.parent);
  }
  std::vector<Status> status(parents.size(), Status::kSuccess);
  std::vector<std::string> messages(parents.size());
  auto runParent = [&](size_t p) {
    for (const Creation& c : creations) {
      if (c.parent != parents[p]) continue;
      try {
        c.create();
      } catch (const Error& e) {
        status[p] = e.status();
        messages[p] = std::string(c.api) + ": " + e.what();
        return;
      } catch (const std::exception& e) {
        status[p] = Status::kInternalError;
        messages[p] = std::string(c.api) + ": internal error: " + e.what();
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t p = 0; p + 1 < parents.size(); ++p) threads.emplace_back(runParent, p);
  if (!parents.empty()) runParent(parents.size() - 1);
  for (auto& t : threads) t.join();
  for (size_t p = 0; p < parents.size(); ++p) {
    if (status[p] != Status::kSuccess) {
      *error = messages[p];
      return status[p];
    }
  }
  return Status::kSuccess;
}

// Waits for the inits started inside a group; returns the first failure of a blocking one (its message in
// *error), else kInProgress when a non-blocking one is still being created, else kSuccess.
Status finishInits(const std::vector<Comm*>& inits, std::string* error) {
  Status result = Status::kSuccess;
  for (Comm* c : inits) {
    if (!c->options().blocking) {
      if (result == Status::kSuccess && c->initResult() == Status::kInProgress) result = Status::kInProgress;
      continue;
    }
    c->joinInitThread();
    const Status s = c->initResult();
    if (s != Status::kSuccess && (result == Status::kSuccess || result == Status::kInProgress)) {
      result = s;
      *error = c->lastError();
    }
  }
  return result;
}

}  // namespace

void recordGroupError(Status s, const std::string& msg) {
  if (group.depth > 0 && group.firstError == Status::kSuccess) {
    group.firstError = s;
    group.firstMessage = msg;
  }
}

bool groupSimulateEnd(double* estimatedUs, Status* firstError, std::string* error) {
  CHORUS_CHECK_USAGE(group.depth > 0, "chorusGroupSimulateEnd called without a matching chorusGroupStart");
  *firstError = Status::kSuccess;
  if (--group.depth > 0) return false;
  GroupState state = std::move(group);
  group = GroupState{};
  const Status inits = finishInits(state.inits, error);
  if (inits != Status::kSuccess && inits != Status::kInProgress) {
    *firstError = inits;
    return false;
  }
  const Status created = runCreations(state.creations, error);
  if (created != Status::kSuccess) {
    *firstError = created;
    *error = "a communicator created in the group failed: " + *error;
    return false;
  }
  if (state.firstError != Status::kSuccess) {
    *firstError = state.firstError;
    *error = "a call in the group failed: " + state.firstMessage;
    return false;
  }
  if (state.calls.empty()) return false;
  std::map<Comm*, double> perComm;
  for (const PendingCall& c : state.calls) {
    // Collectives were tuned when they were called; send and recv are one direct transfer each.
    const coll::Algo algo =
        c.op.type == coll::CollType::kSend || c.op.type == coll::CollType::kRecv ? coll::Algo::kDirect : c.op.algo;
    perComm[c.comm] += std::max(0.0, coll::predictUs(c.op, algo, c.comm->tuning()));
  }
  double longest = 0;
  for (const auto& [comm, us] : perComm) longest = std::max(longest, us);
  *estimatedUs = longest;
  return true;
}

Status groupEnd() {
  GroupState& g = group;
  CHORUS_CHECK_USAGE(g.depth > 0, "chorusGroupEnd called without a matching chorusGroupStart");
  if (--g.depth > 0) return Status::kSuccess;
  // The calls move to storage of their own (a launch may fail, and the next group must start empty), and the two
  // vectors trade places so that both keep their capacity: a warm group allocates nothing for its calls.
  thread_local std::vector<PendingCall> calls;
  calls.clear();
  calls.swap(g.calls);
  if (g.inits.empty() && g.creations.empty() && g.firstError == Status::kSuccess) {
    // The common group, calls alone (a send and a receive each step): nothing to move out and reset first.
    launch(calls);
    return Status::kSuccess;
  }
  std::vector<Comm*> created = std::move(g.inits);
  std::vector<Creation> creations = std::move(g.creations);
  Status first = g.firstError;
  std::string msg = std::move(g.firstMessage);
  g.inits.clear();
  g.creations.clear();
  g.firstError = Status::kSuccess;
  g.firstMessage.clear();
  std::string initError;
  const Status inits = finishInits(created, &initError);
  if (inits != Status::kSuccess && inits != Status::kInProgress) {
    CHORUS_THROW(inits, "a communicator created in the group failed: ", initError);
  }
  std::string creationError;
  const Status made = runCreations(creations, &creationError);
  if (made != Status::kSuccess) CHORUS_THROW(made, "a communicator created in the group failed: ", creationError);
  if (first != Status::kSuccess) CHORUS_THROW(first, "a call in the group failed, nothing was launched: ", msg);
  launch(calls);
  return inits;
}

}  // namespace chorus::core
