// Communicator creation: every chorusCommInit* path, split and shrink end here.
#pragma once

#include <memory>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "chorus/chorus.h"
#include "core/comm.h"

namespace chorus::core {

// Creates rank `rank` of `nranks` over the rendezvous of `id`. Blocking: returns the ready communicator.
// Non-blocking (options.blocking == false): returns at once; the rest runs on a thread and the comm's
// initResult() turns from kInProgress to the outcome.
Comm* initRank(const bootstrap::UniqueId& id, int nranks, int rank, const CommOptions& options);

// Creates a communicator over an existing bootstrap (split, shrink).
Comm* initFromBootstrap(std::unique_ptr<bootstrap::Bootstrap> b, const CommOptions& options);

// Resolves CHORUS_DEVICE_AUTO and checks that the device can be used by this build.
int resolveDevice(int device);

}  // namespace chorus::core
