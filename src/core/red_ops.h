// Reduction operations made at run time: chorusRedOpCreatePreMulSum's ops. Each communicator has a table of
// them; entry i is handed to the user as the op value chorusNumOps + i, as NCCL numbers its dynamic ops.
//
// A PreMulSum runs as a sum whose inputs were first multiplied by the scalar: the core scales each rank's input
// into scratch memory when the operation starts (applyPreMulSum) and hands the executor a plain kSum, so the
// executors need not know about it.
#pragma once

#include <cstdint>
#include <vector>

#include "chorus/chorus.h"
#include "collectives/coll_op.h"

namespace chorus::core {

class Comm;

// Creates a PreMulSum op of comm for `dtype`; immediate: the scalar is read now, else at each run from
// `scalar`. Returns the op value. Throws chorusInvalidUsage on a CUDA communicator (not implemented there).
int createPreMulSum(Comm* comm, const void* scalar, reduce::DType dtype, bool immediate);
// Frees an op made by createPreMulSum; throws chorusInvalidArgument for a value that is not one of comm's.
void destroyRedOp(const Comm* comm, int op);
// Drops every op of a communicator being destroyed.
void forgetRedOps(const Comm* comm);

// Sets op->op from a call's raw op argument: a built-in op, or a PreMulSum of comm (then kSum plus the
// preMul* fields). op->dtype must be set: a PreMulSum is only valid with its own datatype. Throws
// chorusInvalidArgument naming the argument. Inline for the built-in ops, which every collective call passes
// (the out-of-line function's frame was most of its cost).
void resolveDynamicRedOp(const Comm& comm, int redop, coll::CollOp* op);
inline void resolveRedOp(const Comm& comm, int redop, coll::CollOp* op) {
  if (redop >= 0 && redop < chorusNumOps) {
    op->op = static_cast<reduce::Op>(redop);
    return;
  }
  resolveDynamicRedOp(comm, redop, op);
}

// For an operation with preMulSum set: reads the scalar (now, for a device-resident one), writes each
// element of the input times the scalar into *scratch and returns the operation reading from there, as a
// plain sum. Integer types multiply with wraparound, floating types round once to the type.
coll::CollOp applyPreMulSum(const coll::CollOp& op, int nranks, std::vector<char>* scratch);

}  // namespace chorus::core
