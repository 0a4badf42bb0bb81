// The tag every FIFO slot of a collective carries (transport/fifo.h slotWord): the operation's sequence number
// on its communicator and a short signature of the call (collective, type, operation, root, count). A receiver
// compares the whole slot word with the one it expects, so ranks that called different collectives, or the same
// one with a different type, operation, root or count, or that skipped a call, fail on every rank that receives
// from a mismatched peer instead of returning garbage. The check costs nothing the byte count check did not
// already cost: one 64-bit comparison per slot.
//
//   bit 31      1 (a tagged slot; untagged traffic, point-to-point, carries 0)
//   bits 27-30  collective          bits 23-26  element type        bits 20-22  reduction (reductions only)
//   bits 12-19  hash of root (rooted collectives only) and count    bits 0-11   sequence number mod 4096
#pragma once

#include <cstdint>
#include <string>

#include "collectives/coll_op.h"

namespace chorus::coll {

uint32_t slotTag(const CollOp& op, uint32_t seq);

// The tag of call `seq` of an operation whose call-0 tag is `base` (slotTag(op, 0)): a caller that runs one operation
// many times computes the signature once.
inline uint32_t slotTagOfCall(uint32_t base, uint32_t seq) {
  return base | (seq & 0xfff);
}

// "AllReduce(float32, sum, call #17)" — what a tag says, for error messages; the root and count are hashed.
std::string describeSlotTag(uint32_t tag);

}  // namespace chorus::coll
