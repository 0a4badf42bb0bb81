// barrier and monitoredBarrier of ProcessGroupChorus.
//
// barrier is a one-byte all-reduce issued on the group's stream, so it also completes every earlier
// operation of the group. monitoredBarrier is a host-side barrier through the group's store, as Gloo's is
// through send/recv: every rank reports to rank 0, which waits for each (up to the timeout), names the ranks
// that did not come, and releases the others; its messages are Gloo's.
#include <c10/util/Exception.h>

#include <algorithm>
#include <string>

#include "chorus_error.h"
#include "process_group_chorus.h"

namespace chorus_torch {

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::barrier(const c10d::BarrierOptions& /*opts*/) {
  OpPlan plan(c10d::OpType::BARRIER, "chorus:barrier", {}, {});
  const at::Tensor token = at::zeros({1}, at::kByte);
  plan.keepAlive = {token};
  plan.issue = [token](chorusComm_t comm, chorusStream_t stream) {
    checkChorus(chorusAllReduce(token.data_ptr(), token.data_ptr(), 1, chorusUint8, chorusMax, comm, stream), comm,
                "chorus: barrier");
  };
  return run(std::move(plan), at::Tensor());
}

void ProcessGroupChorus::monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks) {
  const std::chrono::milliseconds timeout = opts.timeout == c10d::kUnsetTimeout ? timeout_ : opts.timeout;
  const std::string prefix = "chorus/monitored_barrier/" + std::to_string(monitoredBarriers_++) + "/";
  const std::string release = prefix + "release";
  // Earlier operations of the group first, as Gloo's barrier runs after its queued work.
  host_->drain();
  if (rank_ != 0) {
    store_->set(prefix + std::to_string(rank_), std::vector<uint8_t>{1});
    std::string verdict;
    try {
      store_->wait({release}, timeout);
      const std::vector<uint8_t> v = store_->get(release);
      verdict.assign(v.begin(), v.end());
    } catch (const std::exception& e) {
      verdict = e.what();
    }
    TORCH_CHECK(verdict == "ok", "Rank ", rank_,
                " successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0: ",
                verdict);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<int> missing;
  auto fail = [&](const std::string& verdict) {
    store_->set(release, std::vector<uint8_t>(verdict.begin(), verdict.end()));
  };
  for (int r = 1; r < size_; ++r) {
    // With waitAllRanks every rank gets the whole timeout (as Gloo), else what is left of it.
    auto left = timeout;
    if (!waitAllRanks) {
      const auto leftNs = timeout - (std::chrono::steady_clock::now() - start);
      if (leftNs <= std::chrono::nanoseconds(0)) {
        std::string done;
        for (int p = 1; p < r; ++p) done += (done.empty() ? "" : ", ") + std::to_string(p);
        fail("failed: rank 0 timed out");
        TORCH_CHECK(false, "Rank ", rank_, " timed out in monitoredBarrier after ", timeout.count(), " ms. ",
                    done.empty() ? std::string("No ranks successfully processed in monitoredBarrier.")
                                 : "Successfully processed ranks: " + done);
      }
      left = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(leftNs), std::chrono::milliseconds(1));
    }
    try {
      store_->wait({prefix + std::to_string(r)}, left);
    } catch (const std::exception& e) {
      missing.push_back(r);
      if (!waitAllRanks) {
        fail("failed: rank " + std::to_string(r));
        TORCH_CHECK(false, "[Rank 0]: Rank ", r, " failed to pass monitoredBarrier in ", timeout.count(),
                    " ms\n Original exception: \n", e.what());
      }
    }
  }
  if (!missing.empty()) {
    std::string ranks;
    for (int r : missing) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    fail("failed: ranks " + ranks);
    TORCH_CHECK(false, "[Rank 0]: Ranks ", ranks, " failed to pass monitoredBarrier in ", timeout.count(), " ms");
  }
  store_->set(release, std::vector<uint8_t>{'o', 'k'});
}

}  // namespace chorus_torch
