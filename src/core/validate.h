// Argument checks of the data calls: every bad argument is chorusInvalidArgument with a message that names
// it, raised before anything is sent, so the communicator stays usable.
#pragma once

#include "chorus/chorus.h"
#include "collectives/coll_op.h"

namespace chorus::core {

class Comm;

// Checks op against comm (types, ops, roots, peers, buffers, in-place layouts, overlaps, size overflow).
void validateOp(const Comm& comm, const coll::CollOp& op);

// Converts API enums, throwing chorusInvalidArgument naming the argument for values out of range.
reduce::DType toDType(chorusDataType_t t);
reduce::Op toOp(chorusRedOp_t op);

}  // namespace chorus::core
