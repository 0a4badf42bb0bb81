// chorusCommGetFailedRanks: the survivors of a communicator agree, over its bootstrap, on which ranks failed.
#pragma once

#include <vector>

#include "core/comm.h"

namespace chorus::core {

// Collective over the live ranks of comm. Returns the failed ranks in increasing order, the same list on every
// survivor (see the protocol in failed_ranks.cc). Throws only for errors of the caller's own bootstrap.
std::vector<int> agreeOnFailedRanks(Comm& comm);

}  // namespace chorus::core
