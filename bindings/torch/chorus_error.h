// Chorus results as C++ exceptions that reach Python as RuntimeError carrying Chorus's own message.
#pragma once

#include <stdexcept>
#include <string>

#include "chorus/chorus.h"

namespace chorus_torch {

// The message of a failed call: the thread's last Chorus error, else comm's, else the result's name.
std::string chorusMessage(chorusResult_t rc, chorusComm_t comm);

// Throws std::runtime_error("<what>: <Chorus's message>") unless rc is chorusSuccess.
void checkChorus(chorusResult_t rc, chorusComm_t comm, const char* what);

}  // namespace chorus_torch
