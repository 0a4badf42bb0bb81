// Inputs of the collective tests, and their expected results.
//
// Inputs are a formula of (rank, index, seed), as nccl-tests does, chosen so that every reduction is exact
// in any order for every type: integers wrap (any order gives the same result); floating sums use small
// integers whose partial sums stay exact even in float8; floating products use +-1/2, 1 and 2, whose
// products stay exact; max and min are exact. Floating avg is compared with a tolerance (pre-multiplying by
// 1/nranks rounds), integer avg exactly (sum divided by nranks, truncated toward zero).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "chorus/chorus.h"

namespace chorus::test {

size_t typeSize(chorusDataType_t t);
const char* typeName(chorusDataType_t t);
const char* opName(chorusRedOp_t op);

// The value (as a double) rank `rank` contributes at element `i`.
double inputValue(chorusDataType_t t, chorusRedOp_t op, int rank, size_t i, uint64_t seed);
// Fills buf (count elements of type t) with rank's inputs.
void fillInput(void* buf, chorusDataType_t t, chorusRedOp_t op, int rank, size_t count, uint64_t seed);
// The reduction over ranks [0, nranks) of element i.
double expectedReduce(chorusDataType_t t, chorusRedOp_t op, int nranks, size_t i, uint64_t seed);
// Reads element i of buf as a double.
double readValue(const void* buf, chorusDataType_t t, size_t i);
// True when `got` matches `want` for type t and op (exact, or within the avg tolerance).
bool matches(chorusDataType_t t, chorusRedOp_t op, int nranks, double got, double want);

// Compares count elements of buf against expect(i); returns the number wrong and describes the first one.
template <typename Expect>
size_t countWrong(const void* buf, chorusDataType_t t, chorusRedOp_t op, int nranks, size_t count, Expect expect,
                  std::string* first) {
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) {
    double want = expect(i);
    double got = readValue(buf, t, i);
    if (!matches(t, op, nranks, got, want)) {
      if (wrong == 0 && first != nullptr) {
        *first = "element " + std::to_string(i) + ": got " + std::to_string(got) + ", want " + std::to_string(want);
      }
      ++wrong;
    }
  }
  return wrong;
}

}  // namespace chorus::test
