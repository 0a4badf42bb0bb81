#include "core/config.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "base/logging.h"
#include "base/params.h"
#include "collectives/conn_key.h"

namespace chorus::core {

namespace {

constexpr int kUndef = CHORUS_CONFIG_UNDEF_INT;

// Bytes up to and including `blocking`: the smallest config NCCL ever had (2.14).
constexpr size_t kMinConfigBytes = offsetof(chorusConfig_t, blocking) + sizeof(int);
static_assert(offsetof(chorusConfig_t, device) == CHORUS_CONFIG_NCCL_BYTES, "Chorus's fields follow NCCL's 80 bytes");

// Copies what the caller's config holds (its `size` bytes, at most ours) over the initializer, then resets the
// fields newer than its version, exactly as NCCL's parseCommConfig does: an ncclConfig_t, or a config built
// against an older header, reads as if its missing fields were left undefined.
chorusConfig_t readConfig(const chorusConfig_t* config) {
  size_t size = 0;
  std::memcpy(&size, config, sizeof(size));
  CHORUS_CHECK_ARG(size >= kMinConfigBytes && config->magic == CHORUS_CONFIG_MAGIC,
                   "config was not initialized with CHORUS_CONFIG_INITIALIZER (NCCL_CONFIG_INITIALIZER): size ", size,
                   ", magic 0x", std::hex, config->magic);
  chorusConfig_t c = CHORUS_CONFIG_INITIALIZER;
  std::memcpy(static_cast<void*>(&c), config, std::min(size, sizeof(c)));
  CHORUS_CHECK_ARG(c.version >= CHORUS_VERSION(2, 14, 0), "config->version ", c.version,
                   " is not an NCCL version code of 2.14 or later: initialize the config with "
                   "CHORUS_CONFIG_INITIALIZER");
  const chorusConfig_t d = CHORUS_CONFIG_INITIALIZER;
  if (c.version < CHORUS_VERSION(2, 17, 0)) {
    c.cgaClusterSize = d.cgaClusterSize;
    c.minCTAs = d.minCTAs;
    c.maxCTAs = d.maxCTAs;
    c.netName = d.netName;
  }
  if (c.version < CHORUS_VERSION(2, 25, 0)) c.trafficClass = d.trafficClass;
  if (c.version < CHORUS_VERSION(2, 27, 0)) {
    c.collnetEnable = d.collnetEnable;
    c.CTAPolicy = d.CTAPolicy;
    c.shrinkShare = d.shrinkShare;
    c.nvlsCTAs = d.nvlsCTAs;
  }
  if (c.version < CHORUS_VERSION(2, 28, 0)) {
    c.nChannelsPerNetPeer = d.nChannelsPerNetPeer;
    c.nvlinkCentricSched = d.nvlinkCentricSched;
  }
  return c;
}

void checkZeroOne(int v, const char* field) {
  CHORUS_CHECK_ARG(v == kUndef || v == 0 || v == 1, "config->", field, " must be 0 or 1, not ", v);
}

// NCCL's checks of its fields, with messages that name the field.
void validateNcclFields(const chorusConfig_t& c) {
  checkZeroOne(c.blocking, "blocking");
  CHORUS_CHECK_ARG(c.cgaClusterSize == kUndef || c.cgaClusterSize >= 0, "config->cgaClusterSize must be >= 0, not ",
                   c.cgaClusterSize);
  CHORUS_CHECK_ARG(c.minCTAs == kUndef || c.minCTAs > 0, "config->minCTAs must be > 0, not ", c.minCTAs);
  CHORUS_CHECK_ARG(c.maxCTAs == kUndef || c.maxCTAs > 0, "config->maxCTAs must be > 0, not ", c.maxCTAs);
  CHORUS_CHECK_ARG(c.minCTAs == kUndef || c.maxCTAs == kUndef || c.minCTAs <= c.maxCTAs, "config->minCTAs (", c.minCTAs,
                   ") exceeds config->maxCTAs (", c.maxCTAs, ")");
  checkZeroOne(c.splitShare, "splitShare");
  checkZeroOne(c.collnetEnable, "collnetEnable");
  CHORUS_CHECK_ARG(
      c.CTAPolicy == kUndef || (c.CTAPolicy >= CHORUS_CTA_POLICY_DEFAULT && c.CTAPolicy <= CHORUS_CTA_POLICY_ZERO),
      "config->CTAPolicy must be a CHORUS_CTA_POLICY_* value (0..2), not ", c.CTAPolicy);
  checkZeroOne(c.shrinkShare, "shrinkShare");
  CHORUS_CHECK_ARG(c.nvlsCTAs == kUndef || c.nvlsCTAs > 0, "config->nvlsCTAs must be > 0, not ", c.nvlsCTAs);
  CHORUS_CHECK_ARG(c.nChannelsPerNetPeer == kUndef || (c.nChannelsPerNetPeer > 0 && c.nChannelsPerNetPeer <= 64),
                   "config->nChannelsPerNetPeer must be in [1, 64], not ", c.nChannelsPerNetPeer);
  checkZeroOne(c.nvlinkCentricSched, "nvlinkCentricSched");
}

}  // namespace

CommOptions resolveOptions(const chorusConfig_t* config, const CommOptions* inherit) {
  CommOptions o;
  if (inherit != nullptr) {
    o = *inherit;
  } else {
    o.timeoutMs = param::TimeoutMs();
    o.checkMode = param::Check() != 0;
    o.device = CHORUS_DEVICE_HOST;
    // CHORUS_MIN_CTAS and CHORUS_MAX_CTAS (NCCL_MIN_CTAS and NCCL_MAX_CTAS in NCCL): the config's defaults.
    if (param::MinCtas() > 0) o.minChannels = static_cast<int>(std::min<int64_t>(param::MinCtas(), coll::kMaxChannels));
    if (param::MaxCtas() > 0) o.maxChannels = static_cast<int>(std::min<int64_t>(param::MaxCtas(), coll::kMaxChannels));
  }
  if (config == nullptr) return o;
  const chorusConfig_t c = readConfig(config);
  validateNcclFields(c);
  if (c.blocking != kUndef) o.blocking = c.blocking == 1;
  // Channels are Chorus's CTAs: parallel rings, at most coll::kMaxChannels of them.
  if (c.minCTAs != kUndef) o.minChannels = std::min(c.minCTAs, coll::kMaxChannels);
  if (c.maxCTAs != kUndef) o.maxChannels = std::min(c.maxCTAs, coll::kMaxChannels);
  if (c.netName != nullptr) o.netName = c.netName;
  if (c.commName != nullptr) o.commName = c.commName;
  if (c.collnetEnable == 1) CHORUS_LOG_INFO(kInit, "config->collnetEnable=1: Chorus has no CollNet; ignored");
  if (c.device != kUndef) {
    CHORUS_CHECK_ARG(c.device >= CHORUS_DEVICE_AUTO, "config->device ", c.device,
                     " is not valid (a CUDA device index, CHORUS_DEVICE_HOST or CHORUS_DEVICE_AUTO)");
    o.device = c.device;
  }
  if (c.timeoutMs != kUndef) {
    CHORUS_CHECK_ARG(c.timeoutMs >= 0, "config->timeoutMs must be >= 0 (0: no deadline), not ", c.timeoutMs);
    o.timeoutMs = c.timeoutMs;
  }
  if (c.checkMode != kUndef) o.checkMode = c.checkMode != 0;
  return o;
}

}  // namespace chorus::core
