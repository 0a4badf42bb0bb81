// Groups (chorusGroupStart/End) and the submission of every call. Outside a group a call is launched at
// once; inside one it is collected (per thread), and the outermost chorusGroupEnd launches everything:
// per stream, one launch whose works (one per communicator) run together.
#pragma once

#include <functional>
#include <string>

#include "base/status.h"
#include "collectives/coll_op.h"

namespace chorus::core {

class Comm;
class HostStream;

// The stream a call was made on: a host stream (nullptr: the NULL stream, the call blocks) for a host
// communicator, or a cudaStream_t for a CUDA communicator.
struct CallStream {
  HostStream* host = nullptr;
  void* cuda = nullptr;
};

// Submits one validated, tuned operation: launched now, or collected when the thread is inside a group.
// Throws the launch's failure (base/error.h) for a blocking launch (NULL host stream) or a failed CUDA enqueue.
void submit(Comm* comm, CallStream stream, const coll::CollOp& op);

void groupStart();
// Throws chorusInvalidUsage without a matching groupStart. Waits for the communicators created in the group,
// then throws the first failure of their creation, or the first error of the group's calls (then nothing is
// launched), or of its blocking launches; else returns kInProgress while a non-blocking one is still being
// created, kSuccess otherwise.
Status groupEnd();
// chorusGroupSimulateEnd: ends the group as groupEnd does but launches nothing. When the outermost group had
// calls, *estimatedUs receives the tuner's predicted time for them (per communicator the sum of its calls, the
// longest communicator) and true is returned; false leaves it unset (a nested End, or no calls).
bool groupSimulateEnd(double* estimatedUs, Status* firstError, std::string* error);
// A communicator whose init was started inside the group (chorusCommInitRank*): the outermost groupEnd (or
// groupSimulateEnd) waits for the init of the blocking ones and reports the first failure; with a non-blocking
// one, groupEnd returns kInProgress.
void deferInit(Comm* comm);
// A communicator made from `parent` inside a group (chorusCommSplit, chorusCommShrink), deferred as NCCL defers
// them: `create` (which writes the caller's *newcomm) runs at the outermost groupEnd (or groupSimulateEnd), after the
// group's inits and before its calls, so that one thread may split every rank of a communicator it drives. The
// creations of one parent run in issue order, those of different parents at once (each waits for its peers' calls,
// which this thread may be making for other ranks); groupEnd throws the first failure, naming `api`.
void deferCreation(Comm* parent, const char* api, std::function<void()> create);
// Records an error of a call made inside a group: groupEnd throws the first one.
void recordGroupError(Status s, const std::string& msg);
bool inGroup();

}  // namespace chorus::core
