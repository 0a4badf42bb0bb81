#include "common/test_data.h"

namespace chorus::test {

size_t typeSize(chorusDataType_t t) {
  return reduce::dtypeSize(static_cast<reduce::DType>(t));
}
const char* typeName(chorusDataType_t t) {
  return reduce::dtypeName(static_cast<reduce::DType>(t));
}

const char* opName(chorusRedOp_t op) {
  static const char* names[] = {"sum", "prod", "max", "min", "avg"};
  return names[op];
}

void fillInput(void* buf, chorusDataType_t t, chorusRedOp_t op, int rank, size_t count, uint64_t seed) {
  dispatchType(t, [&](auto type) {
    dispatchOp(op, [&](auto o) {
      for (size_t i = 0; i < count; ++i) storeValue(buf, type, i, inputValue(type, o, rank, i, seed));
    });
  });
}

}  // namespace chorus::test
