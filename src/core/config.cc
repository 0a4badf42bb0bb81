#include "core/config.h"

#include "base/error.h"
#include "base/params.h"

namespace chorus::core {

CommOptions resolveOptions(const chorusConfig_t* config, const CommOptions* inherit) {
  CommOptions o;
  if (inherit != nullptr) {
    o = *inherit;
  } else {
    o.timeoutMs = param::TimeoutMs();
    o.checkMode = param::Check() != 0;
    o.device = CHORUS_DEVICE_HOST;
  }
  if (config == nullptr) return o;
  CHORUS_CHECK_ARG(config->magic == CHORUS_CONFIG_MAGIC && config->size >= offsetof(chorusConfig_t, checkMode) &&
                       config->size <= (1u << 16),
                   "config was not initialized with CHORUS_CONFIG_INITIALIZER (bad size or magic)");
  CHORUS_CHECK_ARG(config->version / 100 == CHORUS_VERSION_CODE / 100, "config version ", config->version,
                   " does not match the library's ", CHORUS_VERSION_CODE);
  if (config->blocking != CHORUS_CONFIG_UNDEF_INT) {
    CHORUS_CHECK_ARG(config->blocking == 0 || config->blocking == 1, "config->blocking must be 0 or 1, not ",
                     config->blocking);
    o.blocking = config->blocking == 1;
  }
  if (config->device != CHORUS_CONFIG_UNDEF_INT) {
    CHORUS_CHECK_ARG(config->device >= CHORUS_DEVICE_AUTO, "config->device ", config->device, " is not valid");
    o.device = config->device;
  }
  if (config->timeoutMs != CHORUS_CONFIG_UNDEF_INT) {
    CHORUS_CHECK_ARG(config->timeoutMs >= 0, "config->timeoutMs must be >= 0 (0: no deadline), not ",
                     config->timeoutMs);
    o.timeoutMs = config->timeoutMs;
  }
  if (config->netName != nullptr) o.netName = config->netName;
  if (config->minChannels != CHORUS_CONFIG_UNDEF_INT) {
    CHORUS_CHECK_ARG(config->minChannels >= 1 && config->minChannels <= 16, "config->minChannels must be in [1, 16]");
    o.minChannels = config->minChannels;
  }
  if (config->maxChannels != CHORUS_CONFIG_UNDEF_INT) {
    CHORUS_CHECK_ARG(config->maxChannels >= 1 && config->maxChannels <= 16, "config->maxChannels must be in [1, 16]");
    o.maxChannels = config->maxChannels;
  }
  CHORUS_CHECK_ARG(o.maxChannels == 0 || o.minChannels <= o.maxChannels,
                   "config->minChannels exceeds config->maxChannels");
  if (config->commName != nullptr) o.commName = config->commName;
  if (config->checkMode != CHORUS_CONFIG_UNDEF_INT) o.checkMode = config->checkMode != 0;
  return o;
}

}  // namespace chorus::core
