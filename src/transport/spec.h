// The name every transport gives a connection in messages and logs: "rank 1 -> rank 2 lane 0 over shm".
#pragma once

#include <string>

#include "transport/transport.h"

namespace chorus::transport {

// The name of the connection `spec` describes, seen from the sending (send = true) or receiving end.
std::string connectionName(const ConnectSpec& spec, bool send, const char* transport);

}  // namespace chorus::transport
