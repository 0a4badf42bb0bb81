// Issue 13 item 6: a destroyed communicator's or stream's handle stays invalid even when new ones are made
// after it: destroying the stale handle is chorusInvalidArgument and leaves the new object working.
#include <gtest/gtest.h>

#include <vector>

#include "chorus/chorus.h"

namespace {

TEST(Handles, StaleCommunicatorHandleNeverNamesANewOne) {
  for (int round = 0; round < 20; ++round) {
    chorusComm_t old = nullptr;
    ASSERT_EQ(chorusCommInitAll(&old, 1, nullptr), chorusSuccess);
    ASSERT_EQ(chorusCommDestroy(old), chorusSuccess);
    chorusComm_t fresh = nullptr;
    ASSERT_EQ(chorusCommInitAll(&fresh, 1, nullptr), chorusSuccess);
    EXPECT_NE(fresh, old) << "round " << round << ": a new communicator reused a destroyed one's handle";
    EXPECT_EQ(chorusCommDestroy(old), chorusInvalidArgument) << "round " << round;
    std::vector<float> v(16, 2.0f);
    EXPECT_EQ(chorusAllReduce(v.data(), v.data(), v.size(), chorusFloat32, chorusSum, fresh, nullptr), chorusSuccess)
        << "round " << round << ": " << chorusGetLastError(fresh);
    EXPECT_EQ(v[0], 2.0f);
    EXPECT_EQ(chorusCommDestroy(fresh), chorusSuccess);
  }
}

TEST(Handles, StaleStreamHandleNeverNamesANewOne) {
  for (int round = 0; round < 20; ++round) {
    chorusStream_t old = nullptr;
    ASSERT_EQ(chorusStreamCreate(&old), chorusSuccess);
    ASSERT_EQ(chorusStreamDestroy(old), chorusSuccess);
    chorusStream_t fresh = nullptr;
    ASSERT_EQ(chorusStreamCreate(&fresh), chorusSuccess);
    EXPECT_NE(fresh, old) << "round " << round;
    EXPECT_EQ(chorusStreamDestroy(old), chorusInvalidArgument) << "round " << round;
    EXPECT_EQ(chorusStreamSynchronize(fresh), chorusSuccess) << "round " << round;
    EXPECT_EQ(chorusStreamDestroy(fresh), chorusSuccess);
  }
}

}  // namespace
