// Issue 13 item 6: a destroyed communicator's or stream's handle stays invalid even when new ones are made
// after it: destroying the stale handle is chorusInvalidArgument and leaves the new object working.
#include <gtest/gtest.h>

#include <thread>
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

// A thread remembers the last live handle it checked (handle_registry.h): a handle this thread used just before,
// destroyed by another thread or by this one, is still rejected.
TEST(Handles, AHandleUsedJustBeforeItsDestructionIsRejectedAfterIt) {
  std::vector<float> v(4, 1.0f);
  for (bool otherThread : {false, true}) {
    chorusComm_t comm = nullptr;
    chorusStream_t stream = nullptr;
    ASSERT_EQ(chorusCommInitAll(&comm, 1, nullptr), chorusSuccess);
    ASSERT_EQ(chorusStreamCreate(&stream), chorusSuccess);
    ASSERT_EQ(chorusAllReduce(v.data(), v.data(), v.size(), chorusFloat32, chorusSum, comm, stream), chorusSuccess);
    ASSERT_EQ(chorusStreamSynchronize(stream), chorusSuccess);
    auto destroy = [&] {
      EXPECT_EQ(chorusStreamDestroy(stream), chorusSuccess);
      EXPECT_EQ(chorusCommDestroy(comm), chorusSuccess);
    };
    if (otherThread) {
      std::thread(destroy).join();
    } else {
      destroy();
    }
    EXPECT_EQ(chorusAllReduce(v.data(), v.data(), v.size(), chorusFloat32, chorusSum, comm, nullptr),
              chorusInvalidArgument)
        << (otherThread ? "destroyed by another thread" : "destroyed by this thread");
    EXPECT_EQ(chorusStreamSynchronize(stream), chorusInvalidArgument);
  }
}

}  // namespace
