// Reusing a plan for the same operations on other buffers.
//
// Planning reads where an operation's buffers lie only relative to one another (in place or not, a block that
// lands where a block still to be sent is, a send to oneself that lands where it already is), never their
// addresses as such. So the plan of operations that repeat earlier ones with every buffer moved by one distance
// is the earlier plan with every address in it moved by that distance. The core keeps each thread's last plan
// and moves it instead of planning again (core/launch.cc): a training step that runs again, a benchmark that
// moves each launch to another slice of its buffers (as nccl-tests does), a send/recv loop.
#pragma once
#include <cstddef>
#include <vector>

#include "collectives/coll_op.h"
#include "collectives/plan/plan.h"

namespace chorus::coll {

// Whether `ops` are `planned` with every buffer moved by one distance (which may be 0): the same operations in
// the same order (sameButBuffers), each buffer address either null in both or `*shift` bytes from the planned one.
bool movedBy(const std::vector<CollOp>& planned, const std::vector<CollOp>& ops, std::ptrdiff_t* shift);

// Moves every buffer address in *plan (operations, staging sources, transfers, copies to oneself) by `shift`
// bytes; null addresses stay null.
void moveBuffers(Plan* plan, std::ptrdiff_t shift);

}  // namespace chorus::coll
