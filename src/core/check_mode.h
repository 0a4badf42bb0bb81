// CHORUS_CHECK=1 (or config->checkMode): before running, ranks compare the collectives they were called
// with over the bootstrap, and a mismatch (another collective, count, type, op or root) is a clear
// chorusInvalidUsage naming both ranks' calls, instead of a hang or garbage.
#pragma once

#include <vector>

#include "base/wait.h"
#include "collectives/coll_op.h"

namespace chorus::core {

class Comm;

void checkMatchingCalls(Comm& comm, const std::vector<coll::CollOp>& ops, const WaitContext& ctx);

}  // namespace chorus::core
