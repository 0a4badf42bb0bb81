#include "any_source.h"

#include <c10/util/Exception.h>

#include <cstdlib>
#include <cstring>
#include <thread>

namespace chorus_torch {

AnySourceLedger::AnySourceLedger(c10::intrusive_ptr<c10d::Store> store, int rank, int size,
                                 std::chrono::milliseconds timeout)
    : store_(std::move(store)), rank_(rank), timeout_(timeout), sent_(size, 0), received_(size, 0) {}

bool AnySourceLedger::enabled() {
  const char* v = std::getenv("CHORUS_TORCH_ANY_SOURCE");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

std::string AnySourceLedger::key(int src, int dst, uint64_t k) const {
  return "chorus/p2p/" + std::to_string(src) + "/" + std::to_string(dst) + "/" + std::to_string(k);
}

void AnySourceLedger::announceSend(int dst) {
  store_->set(key(rank_, dst, sent_[dst]++), std::vector<uint8_t>{1});
}

void AnySourceLedger::countRecv(int src) {
  ++received_[src];
}

int AnySourceLedger::claimAnySource() {
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    for (size_t s = 0; s < received_.size(); ++s) {
      if (static_cast<int>(s) == rank_) continue;
      if (store_->check({key(static_cast<int>(s), rank_, received_[s])})) {
        ++received_[s];
        return static_cast<int>(s);
      }
    }
    TORCH_CHECK(std::chrono::steady_clock::now() < deadline, "chorus: recv from any source: Timed out after ",
                timeout_.count(), " ms (the process group's timeout) with no message announced to rank ", rank_);
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
  }
}

}  // namespace chorus_torch
