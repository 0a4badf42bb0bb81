#include "bootstrap/failure_notice.h"

#include <algorithm>

#include "base/error.h"

namespace chorus::bootstrap {
namespace {

// How a raised notice names its peer: "peer rank P failed: <why>" (carriesFailureNotice recognizes it).
constexpr const char* kNoticeWords = "peer rank ";
constexpr const char* kNoticeWordsAfterRank = " failed: ";

}  // namespace

Status noticeStatus(Status cause) {
  return cause == Status::kTimeout ? Status::kTimeout : Status::kRemoteError;
}

std::vector<uint8_t> encodeFailureNotice(Status cause, const std::string& why) {
  const size_t n = std::min(why.size(), kFailureNoticeMaxText);
  std::vector<uint8_t> notice;
  notice.reserve(1 + n);
  notice.push_back(static_cast<uint8_t>(cause));
  notice.insert(notice.end(), why.begin(), why.begin() + static_cast<std::ptrdiff_t>(n));
  return notice;
}

void checkFailureNotices(const Mailbox& mailbox, uint64_t authHash, uint64_t commHash, int rank, int nranks) {
  if (mailbox.notices() == 0) return;
  std::vector<uint8_t> msg;
  for (int p = 0; p < nranks; ++p) {
    if (p == rank || !mailbox.peek(MailKey{authHash, commHash, rank, p, kFailureNoticeTag}, &msg)) continue;
    // An empty notice (none is sent so) still means the peer failed; its cause is unknown.
    const Status cause = msg.empty() ? Status::kRemoteError : static_cast<Status>(msg[0]);
    const std::string why = msg.empty() ? std::string() : std::string(msg.begin() + 1, msg.end());
    CHORUS_THROW(noticeStatus(cause), "rank ", rank, ": ", kNoticeWords, p, kNoticeWordsAfterRank, why);
  }
}

bool carriesFailureNotice(const std::string& message) {
  const std::string before(kNoticeWords), after(kNoticeWordsAfterRank);
  for (size_t at = message.find(before); at != std::string::npos; at = message.find(before, at + 1)) {
    size_t digits = at + before.size();
    while (digits < message.size() && message[digits] >= '0' && message[digits] <= '9') ++digits;
    if (digits > at + before.size() && message.compare(digits, after.size(), after) == 0) return true;
  }
  return false;
}

}  // namespace chorus::bootstrap
