// A collective of count 0 ends at the call, checked, as NCCL discards it (api_coll.cc): nothing is planned or run.
// One rank issues every kind alone, on the NULL stream (where a launch would plan on this thread), on a host stream
// and in a group; the communicator then all-reduces with every rank, and bad arguments are still refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "common/on_threads.h"
#include "core/launch.h"

namespace {

using chorus::test::onThreads;

// Every collective, count 0, NULL buffers, each expected to return chorusSuccess.
void issueEveryKind(chorusComm_t c, chorusStream_t stream) {
  EXPECT_EQ(chorusAllReduce(nullptr, nullptr, 0, chorusFloat32, chorusSum, c, stream), chorusSuccess);
  EXPECT_EQ(chorusBroadcast(nullptr, nullptr, 0, chorusFloat32, 1, c, stream), chorusSuccess);
  EXPECT_EQ(chorusReduce(nullptr, nullptr, 0, chorusInt8, chorusMax, 2, c, stream), chorusSuccess);
  EXPECT_EQ(chorusAllGather(nullptr, nullptr, 0, chorusFloat64, c, stream), chorusSuccess);
  EXPECT_EQ(chorusReduceScatter(nullptr, nullptr, 0, chorusInt32, chorusProd, c, stream), chorusSuccess);
  EXPECT_EQ(chorusAlltoAll(nullptr, nullptr, 0, chorusUint8, c, stream), chorusSuccess);
  EXPECT_EQ(chorusGather(nullptr, nullptr, 0, chorusFloat16, 0, c, stream), chorusSuccess);
  EXPECT_EQ(chorusScatter(nullptr, nullptr, 0, chorusBfloat16, 1, c, stream), chorusSuccess);
}

TEST(ZeroCount, CollectivesEndAtTheCall) {
  const int n = 3;
  std::vector<chorusComm_t> comms(n);
  ASSERT_EQ(chorusCommInitAll(comms.data(), n, nullptr), chorusSuccess);
  chorusComm_t c = comms[0];
  const uint64_t plansBefore = chorus::core::plansMadeOnThisThread();
  issueEveryKind(c, nullptr);
  EXPECT_EQ(chorus::core::plansMadeOnThisThread(), plansBefore) << "a zero-count collective was launched";
  chorusStream_t s;
  ASSERT_EQ(chorusStreamCreate(&s), chorusSuccess);
  issueEveryKind(c, s);
  for (chorusStream_t stream : {static_cast<chorusStream_t>(nullptr), s}) {
    ASSERT_EQ(chorusGroupStart(), chorusSuccess);
    issueEveryKind(c, stream);
    EXPECT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(c);
  }
  EXPECT_EQ(chorusStreamSynchronize(s), chorusSuccess) << chorusGetLastError(c);
  EXPECT_EQ(chorusStreamDestroy(s), chorusSuccess);
  // Checked all the same.
  EXPECT_EQ(chorusBroadcast(nullptr, nullptr, 0, chorusFloat32, 3, c, nullptr), chorusInvalidArgument);
  EXPECT_NE(std::string(chorusGetLastError(c)).find("root 3"), std::string::npos) << chorusGetLastError(c);
  // Every rank goes on as if nothing had been issued.
  onThreads(n, [&](int r) {
    int x = r, y = -1;
    ASSERT_EQ(chorusAllReduce(&x, &y, 1, chorusInt32, chorusSum, comms[r], nullptr), chorusSuccess)
        << chorusGetLastError(comms[r]);
    EXPECT_EQ(y, n * (n - 1) / 2);
  });
  for (chorusComm_t comm : comms) EXPECT_EQ(chorusCommDestroy(comm), chorusSuccess);
}

}  // namespace
