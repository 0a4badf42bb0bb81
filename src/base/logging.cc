#include "base/logging.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>

#include "base/params.h"

namespace chorus {
namespace {

thread_local int tlsRank = -1;

struct LogState {
  std::atomic<bool> loaded{false};
  std::mutex mu;
  LogLevel level = LogLevel::kNone;
  uint32_t subsys = kInit | kBootstrap | kEnv;
  FILE* out = stderr;
  char host[64] = "?";
};

LogState& state() {
  static LogState s;
  return s;
}

struct SubsysName {
  const char* name;
  uint32_t bit;
};
constexpr SubsysName kSubsysNames[] = {
    {"INIT", kInit},     {"COLL", kColl},   {"P2P", kP2p},
    {"SHM", kShm},       {"NET", kNet},     {"GRAPH", kGraph},
    {"TUNING", kTuning}, {"ENV", kEnv},     {"BOOTSTRAP", kBootstrap},
    {"ALLOC", kAlloc},   {"PROXY", kProxy}, {"ALL", kAll},
};

LogLevel parseLevel(const char* s) {
  if (s == nullptr) return LogLevel::kNone;
  if (strcasecmp(s, "VERSION") == 0) return LogLevel::kVersion;
  if (strcasecmp(s, "WARN") == 0) return LogLevel::kWarn;
  if (strcasecmp(s, "INFO") == 0) return LogLevel::kInfo;
  if (strcasecmp(s, "TRACE") == 0) return LogLevel::kTrace;
  return LogLevel::kNone;
}

// Expands %h (host) and %p (pid) in a CHORUS_DEBUG_FILE name.
std::string expandFileName(const char* pattern, const char* host) {
  std::string out;
  for (const char* p = pattern; *p; ++p) {
    if (p[0] == '%' && p[1] == 'h') {
      out += host;
      ++p;
    } else if (p[0] == '%' && p[1] == 'p') {
      out += std::to_string(getpid());
      ++p;
    } else {
      out += *p;
    }
  }
  return out;
}

void load(LogState& s) {
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.loaded.load(std::memory_order_relaxed)) return;
  gethostname(s.host, sizeof(s.host) - 1);
  if (char* dot = strchr(s.host, '.')) *dot = '\0';
  // Through param::text: the typed readers log what they read, and the log is what is being set up here.
  const std::optional<std::string> level = param::text("CHORUS_DEBUG");
  s.level = parseLevel(level ? level->c_str() : nullptr);
  const std::optional<std::string> sub = param::text("CHORUS_DEBUG_SUBSYS");
  s.subsys = sub ? parseLogSubsys(sub->c_str()) : (kInit | kBootstrap | kEnv);
  if (s.out != stderr && s.out != nullptr) fclose(s.out);
  s.out = stderr;
  if (const std::optional<std::string> file = param::text("CHORUS_DEBUG_FILE"); file && s.level != LogLevel::kNone) {
    std::string name = expandFileName(file->c_str(), s.host);
    if (FILE* f = fopen(name.c_str(), "a")) {
      setvbuf(f, nullptr, _IOLBF, 0);
      s.out = f;
    }
  }
  s.loaded.store(true, std::memory_order_release);
}

}  // namespace

uint32_t parseLogSubsys(const char* spec) {
  bool negate = spec[0] == '^';
  if (negate) ++spec;
  uint32_t mask = 0;
  std::string_view rest(spec);
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view tok = rest.substr(0, comma);
    for (const auto& n : kSubsysNames) {
      if (tok.size() == strlen(n.name) && strncasecmp(tok.data(), n.name, tok.size()) == 0) mask |= n.bit;
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return negate ? ~mask : mask;
}

void resetLogging() {
  LogState& s = state();
  s.loaded.store(false);
  load(s);
}

LogLevel logLevel() {
  LogState& s = state();
  if (!s.loaded.load(std::memory_order_acquire)) load(s);
  return s.level;
}

bool logEnabled(LogLevel level, uint32_t subsys) {
  LogState& s = state();
  if (!s.loaded.load(std::memory_order_acquire)) load(s);
  if (level == LogLevel::kWarn || level == LogLevel::kVersion) return s.level >= level;
  return s.level >= level && (s.subsys & subsys) != 0;
}

void logLine(LogLevel level, uint32_t subsys, const std::string& msg) {
  (void)subsys;
  LogState& s = state();
  if (level == LogLevel::kVersion) {
    std::lock_guard<std::mutex> lock(s.mu);
    fprintf(s.out, "%s\n", msg.c_str());
    return;
  }
  const char* name = level == LogLevel::kWarn ? "WARN" : level == LogLevel::kTrace ? "TRACE" : "INFO";
  long tid = syscall(SYS_gettid);
  char rank[16] = "";
  if (tlsRank >= 0) snprintf(rank, sizeof(rank), "[%d] ", tlsRank);
  std::lock_guard<std::mutex> lock(s.mu);
  fprintf(s.out, "%s:%d:%ld %sCHORUS %s %s\n", s.host, static_cast<int>(getpid()), tid, rank, name, msg.c_str());
}

LogRankScope::LogRankScope(int rank) : saved_(tlsRank) {
  tlsRank = rank;
}
LogRankScope::~LogRankScope() {
  tlsRank = saved_;
}

}  // namespace chorus
