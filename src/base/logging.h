// Logging in NCCL's format: `host:pid:tid [rank] CHORUS INFO message`.
//
// CHORUS_DEBUG selects the level (VERSION, WARN, INFO, TRACE; default none), CHORUS_DEBUG_SUBSYS a comma list
// of subsystems (`^` negates the list; default INIT,BOOTSTRAP,ENV), CHORUS_DEBUG_FILE a file name in which
// %h expands to the host name and %p to the pid. The rank printed is the calling thread's current rank, set
// by LogRankScope around work done for one rank of one communicator.
#pragma once

#include <cstdint>
#include <string>

#include "base/error.h"

namespace chorus {

enum class LogLevel : int { kNone = 0, kVersion = 1, kWarn = 2, kInfo = 3, kTrace = 4 };

// Subsystem bits, as NCCL_DEBUG_SUBSYS names them.
enum LogSubsys : uint32_t {
  kInit = 1u << 0,
  kColl = 1u << 1,
  kP2p = 1u << 2,
  kShm = 1u << 3,
  kNet = 1u << 4,
  kGraph = 1u << 5,
  kTuning = 1u << 6,
  kEnv = 1u << 7,
  kBootstrap = 1u << 8,
  kAlloc = 1u << 9,
  kProxy = 1u << 10,
  kAll = ~0u,
};

// The level CHORUS_DEBUG selects.
LogLevel logLevel();
// True when a message of this level and subsystem would be printed (cheap; cached after first call).
bool logEnabled(LogLevel level, uint32_t subsys);
// Prints one line. Use the macros, which skip formatting when the line is filtered out. A kVersion line is
// printed bare, without the host:pid:tid prefix, as NCCL prints its version line at NCCL_DEBUG=VERSION.
void logLine(LogLevel level, uint32_t subsys, const std::string& msg);
// Parses a subsystem list such as "INIT,NET" or "^COLL"; exposed for tests.
uint32_t parseLogSubsys(const char* spec);
// Re-reads the CHORUS_DEBUG* variables (tests change them at run time).
void resetLogging();

// Sets the rank printed in log lines from this thread for the scope's lifetime.
class LogRankScope {
 public:
  explicit LogRankScope(int rank);
  ~LogRankScope();
  LogRankScope(const LogRankScope&) = delete;
  LogRankScope& operator=(const LogRankScope&) = delete;

 private:
  int saved_;
};

}  // namespace chorus

#define CHORUS_LOG(level, subsys, ...)                                             \
  do {                                                                             \
    if (::chorus::logEnabled((level), (subsys)))                                   \
      ::chorus::logLine((level), (subsys), ::chorus::detail::concat(__VA_ARGS__)); \
  } while (0)
#define CHORUS_LOG_WARN(subsys, ...) CHORUS_LOG(::chorus::LogLevel::kWarn, ::chorus::subsys, __VA_ARGS__)
#define CHORUS_LOG_INFO(subsys, ...) CHORUS_LOG(::chorus::LogLevel::kInfo, ::chorus::subsys, __VA_ARGS__)
#define CHORUS_LOG_TRACE(subsys, ...) CHORUS_LOG(::chorus::LogLevel::kTrace, ::chorus::subsys, __VA_ARGS__)
