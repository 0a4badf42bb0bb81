// Communicator creation: every chorusCommInit* path, split and shrink end here.
#pragma once

#include <memory>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "chorus/chorus.h"
#include "core/comm.h"

namespace chorus::core {

// Creates rank `rank` of `nranks` over the rendezvous of `id`. Blocking: returns the ready communicator.
// Non-blocking (options.blocking == false), or `async` (an init inside a group, which chorusGroupEnd completes):
// returns at once; the rest runs on a thread and the comm's initResult() turns from kInProgress to the outcome.
Comm* initRank(const bootstrap::UniqueId& id, int nranks, int rank, const CommOptions& options, bool async = false);

// Creates a communicator over an existing bootstrap (split, shrink).
Comm* initFromBootstrap(std::unique_ptr<bootstrap::Bootstrap> b, const CommOptions& options);

// Creates devices.size() ranks in this process, rank r on devices[r] (resolved), one thread each, over an
// in-process bootstrap: no listener is opened. Returns every rank's communicator, or throws the first
// rank's error (naming the rank) after freeing the others.
std::vector<Comm*> initInProcess(const std::vector<int>& devices, const CommOptions& options);

// Prints the version line once per process, as NCCL does at communicator creation: at CHORUS_DEBUG=VERSION or
// WARN from rank 0 only, as a bare line; at INFO and TRACE from the first rank created, as an INFO line.
void showVersion(int rank);

// Resolves CHORUS_DEVICE_AUTO and checks that the device can be used by this build.
int resolveDevice(int device);

}  // namespace chorus::core
