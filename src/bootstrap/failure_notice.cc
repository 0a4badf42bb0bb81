#include "bootstrap/failure_notice.h"

#include <algorithm>

#include "base/error.h"

namespace chorus::bootstrap {

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
    CHORUS_THROW(noticeStatus(cause), "rank ", rank, ": peer rank ", p, " failed: ", why);
  }
}

}  // namespace chorus::bootstrap
