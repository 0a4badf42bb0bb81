// chorusConfig_t validation and resolution into CommOptions.
#pragma once

#include "chorus/chorus.h"
#include "core/comm.h"

namespace chorus::core {

// Validates `config` (may be null) and merges it with the environment and defaults. `inherit`, when given,
// supplies the defaults instead (chorusCommSplit with a NULL config inherits the parent's options).
// Throws chorusInvalidArgument naming the field for a config without the initializer or a bad value.
CommOptions resolveOptions(const chorusConfig_t* config, const CommOptions* inherit = nullptr);

}  // namespace chorus::core
