// The set of live communicators of this process, so that a destroyed or foreign handle is rejected with
// chorusInvalidArgument instead of being dereferenced.
#pragma once

namespace chorus::core {

class Comm;

void registerComm(Comm* comm);
void unregisterComm(Comm* comm);
bool isRegisteredComm(const void* handle);

}  // namespace chorus::core
