// Groups (chorusGroupStart/End) and the submission of every call. Outside a group a call is launched at
// once; inside one it is collected (per thread), and the outermost chorusGroupEnd launches everything:
// per stream, one launch whose works (one per communicator) run together.
#pragma once

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
// Throws chorusInvalidUsage without a matching groupStart; throws the first error of the group's calls (then
// nothing is launched) or the failure of its launch.
void groupEnd();
// Records an error of a call made inside a group: groupEnd throws the first one.
void recordGroupError(Status s, const std::string& msg);
bool inGroup();

}  // namespace chorus::core
