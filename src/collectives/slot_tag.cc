#include "collectives/slot_tag.h"

#include "collectives/reduce/reduce.h"

namespace chorus::coll {
namespace {

const char* opName(int op) {
  static const char* const kNames[] = {"sum", "prod", "max", "min", "avg"};
  return op >= 0 && op < reduce::kNumOps ? kNames[op] : "?";
}

}  // namespace

uint32_t slotTag(const CollOp& op, uint32_t seq) {
  const int type = static_cast<int>(op.type);
  const int reduction = isReduction(op.type) ? static_cast<int>(op.op) : 0;
  uint64_t h = static_cast<uint64_t>(op.count) * 0x9E3779B97F4A7C15ull;
  if (isRooted(op.type)) h ^= static_cast<uint64_t>(op.root + 1) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  return (1u << 31) | (static_cast<uint32_t>(type & 0xf) << 27) | (static_cast<uint32_t>(op.dtype) & 0xf) << 23 |
         (static_cast<uint32_t>(reduction) & 0x7) << 20 | (static_cast<uint32_t>(h) & 0xff) << 12 |
         slotTagOfCall(0, seq);
}

std::string describeSlotTag(uint32_t tag) {
  if ((tag >> 31) == 0) return "untagged point-to-point data";
  const auto type = static_cast<CollType>((tag >> 27) & 0xf);
  const auto dtype = static_cast<reduce::DType>((tag >> 23) & 0xf);
  std::string s = std::string(collName(type)) + "(" + reduce::dtypeName(dtype);
  if (isReduction(type)) s += std::string(", ") + opName(static_cast<int>((tag >> 20) & 0x7));
  s += ", root/count hash " + std::to_string((tag >> 12) & 0xff) + ", call #" + std::to_string(tag & 0xfff) + ")";
  return s;
}

}  // namespace chorus::coll
