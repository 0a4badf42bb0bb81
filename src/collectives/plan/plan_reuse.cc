#include "collectives/plan/plan_reuse.h"

#include <cstdint>

namespace chorus::coll {

namespace {

// Addresses as integers: the distance between two unrelated buffers is not a pointer difference C++ defines.
std::ptrdiff_t distance(const void* from, const void* to) {
  return static_cast<std::ptrdiff_t>(reinterpret_cast<uintptr_t>(to) - reinterpret_cast<uintptr_t>(from));
}

template <typename T>
void shiftAddress(T*& p, std::ptrdiff_t shift) {
  if (p != nullptr) p = reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(p) + static_cast<uintptr_t>(shift));
}

// Whether `to` is `from` moved by *shift, taking the first non-null pair's distance as the shift.
bool sameShift(const void* from, const void* to, bool* known, std::ptrdiff_t* shift) {
  if (from == nullptr || to == nullptr) return from == to;
  if (!*known) {
    *shift = distance(from, to);
    *known = true;
    return true;
  }
  return distance(from, to) == *shift;
}

}  // namespace

bool movedBy(const std::vector<CollOp>& planned, const std::vector<CollOp>& ops, std::ptrdiff_t* shift) {
  if (planned.size() != ops.size()) return false;
  bool known = false;
  *shift = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const CollOp& a = planned[i];
    const CollOp& b = ops[i];
    if (!sameButBuffers(a, b) || !sameShift(a.sendbuff, b.sendbuff, &known, shift) ||
        !sameShift(a.recvbuff, b.recvbuff, &known, shift)) {
      return false;
    }
  }
  return true;
}

void moveBuffers(Plan* plan, std::ptrdiff_t shift) {
  if (shift == 0) return;
  for (CollPlan& c : plan->colls) {
    shiftAddress(c.op.sendbuff, shift);
    shiftAddress(c.op.recvbuff, shift);
  }
  for (Staging& s : plan->staging) shiftAddress(s.base, shift);
  for (P2pTask& t : plan->tasks) {
    shiftAddress(t.src, shift);
    shiftAddress(t.dst, shift);
  }
  for (SelfCopy& c : plan->selfCopies) {
    shiftAddress(c.src, shift);
    shiftAddress(c.dst, shift);
  }
}

}  // namespace chorus::coll
