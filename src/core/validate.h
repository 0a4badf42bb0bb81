// Argument checks of the data calls: every bad argument is chorusInvalidArgument with a message that names
// it, raised before anything is sent, so the communicator stays usable.
#pragma once

#include <cstring>

#include "chorus/chorus.h"
#include "collectives/coll_op.h"

namespace chorus::core {

class Comm;

// Checks op against comm (types, ops, roots, peers, buffers, in-place layouts, overlaps, size overflow).
void validateOp(const Comm& comm, const coll::CollOp& op);

// Converts API enums, throwing chorusInvalidArgument naming the argument for values out of range. They take
// the raw integer (see enumBits): a C caller may pass any int, and loading an out-of-range value through a C
// enum type is undefined behaviour in C++. (toDType is inline: every data call converts its type.)
[[noreturn]] void throwBadDType(int t);
inline reduce::DType toDType(int t) {
  if (t < 0 || t >= chorusNumTypes) throwBadDType(t);
  return static_cast<reduce::DType>(t);
}
reduce::Op toOp(int op);

// The integer a C caller put in an enum argument, read as bytes (never loaded as the enum type).
template <typename E>
int enumBits(const E& e) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized here");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

}  // namespace chorus::core
