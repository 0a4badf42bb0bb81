// A failure notice: what a rank whose communicator failed, was aborted or was revoked tells each peer
// (Bootstrap::announceFailure), and how a peer raises it (Bootstrap::checkFailureNotices).
//
// A notice carries the status of its first cause next to the text, because a peer's error has to say what went
// wrong, not only who saw it first. When a rank hangs, every rank waiting on it reaches its deadline at about the
// same moment; the one that gets there a few milliseconds later may read the first one's notice before its own
// deadline passes. It must still fail with chorusTimeout, as it would have a moment later (PyTorch's backend words
// that status as "Timed out after ...", and a user's retry logic keys on it). Any other cause reaches the peers as
// chorusRemoteError: the failure happened on another rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "bootstrap/mailbox.h"

namespace chorus::bootstrap {

// The longest reason a notice carries; longer ones are cut (a notice travels in one bootstrap message).
constexpr size_t kFailureNoticeMaxText = 1024;

// The status a peer fails with when it reads a notice whose first cause had status `cause`: chorusTimeout for a
// timeout, chorusRemoteError for anything else.
Status noticeStatus(Status cause);

// The bytes of a notice: one byte of `cause` (a chorusResult_t value), then `why` cut to kFailureNoticeMaxText.
std::vector<uint8_t> encodeFailureNotice(Status cause, const std::string& why);

// Throws the error of the first notice in `mailbox` addressed to `rank` by any other of the `nranks` ranks of
// communicator (`authHash`, `commHash`): status noticeStatus() of its cause, message "rank R: peer rank P failed:
// <why>". Costs one atomic load while no notice arrived in this process.
void checkFailureNotices(const Mailbox& mailbox, uint64_t authHash, uint64_t commHash, int rank, int nranks);

// Whether `message` holds a notice as checkFailureNotices words it ("peer rank P failed: "), alone or inside a longer
// error: such a cause already says what the failing peer found, and is not explained by another notice. Other
// errors that name a peer ("bootstrap peer rank P is gone") are not notices.
bool carriesFailureNotice(const std::string& message);

}  // namespace chorus::bootstrap
