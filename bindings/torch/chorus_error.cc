#include "chorus_error.h"

namespace chorus_torch {

std::string chorusMessage(chorusResult_t rc, chorusComm_t comm) {
  // The thread's record is the failing call's own (every failing call records one); the communicator's may be
  // an older error, so it is only the fallback.
  const char* last = chorusGetLastError(nullptr);
  if ((last == nullptr || last[0] == '\0') && comm != nullptr) last = chorusGetLastError(comm);
  std::string msg = last != nullptr && last[0] != '\0' ? last : "";
  const std::string name = chorusGetErrorString(rc);
  if (msg.empty()) return name;
  return msg + " (" + name + ")";
}

void checkChorus(chorusResult_t rc, chorusComm_t comm, const char* what) {
  if (rc == chorusSuccess) return;
  throw std::runtime_error(std::string(what) + ": " + chorusMessage(rc, comm));
}

}  // namespace chorus_torch
