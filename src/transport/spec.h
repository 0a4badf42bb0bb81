// Helpers every transport uses to read a ConnectSpec: the connection's name in messages and logs
// ("rank 1 -> rank 2 channel 0 over shm") and its slot geometry.
#pragma once

#include <cstddef>
#include <string>

#include "transport/transport.h"

namespace chorus::transport {

// The name of the connection `spec` describes, seen from the sending (send = true) or receiving end.
std::string connectionName(const ConnectSpec& spec, bool send, const char* transport);

// spec.slotBytes, or CHORUS_BUFFSIZE split over spec.nslots when the spec leaves it 0.
size_t slotBytesFor(const ConnectSpec& spec);

}  // namespace chorus::transport
