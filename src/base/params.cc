#include "base/params.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "base/logging.h"

namespace chorus::param {
namespace {

std::atomic<uint64_t> generation{1};

// A string parameter's cached value, refreshed under its lock when reload() moved the generation on.
struct CachedStr {
  std::mutex mu;
  uint64_t gen = 0;
  std::string value;
};

// An integer parameter's cached value. Read on every operation (spin budget, chunk size), so the common
// case is two atomic loads and no lock: `value` is published before `gen`.
struct CachedInt {
  std::mutex mu;
  std::atomic<uint64_t> gen{0};
  std::atomic<int64_t> value{0};
};

int64_t readInt(const char* var, int64_t def) {
  std::string name = std::string("CHORUS_") + var;
  const char* text = std::getenv(name.c_str());
  if (text == nullptr || *text == '\0') return def;
  int64_t v = 0;
  if (!parseSize(text, &v)) {
    CHORUS_LOG_WARN(kEnv, name, "=", text, " is not a number; using the default ", def);
    return def;
  }
  CHORUS_LOG_INFO(kEnv, name, " set by environment to ", v);
  return v;
}

std::string readStr(const char* var, const char* def) {
  std::string name = std::string("CHORUS_") + var;
  const char* text = std::getenv(name.c_str());
  if (text == nullptr) return def;
  CHORUS_LOG_INFO(kEnv, name, " set by environment to ", text);
  return text;
}

template <typename Read>
std::string getStr(CachedStr& c, Read read) {
  uint64_t g = generation.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> lock(c.mu);
  if (c.gen != g) {
    c.value = read();
    c.gen = g;
  }
  return c.value;
}

template <typename Read>
int64_t getInt(CachedInt& c, Read read) {
  uint64_t g = generation.load(std::memory_order_acquire);
  if (c.gen.load(std::memory_order_acquire) == g) return c.value.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(c.mu);
  if (c.gen.load(std::memory_order_relaxed) != g) {
    c.value.store(read(), std::memory_order_relaxed);
    c.gen.store(g, std::memory_order_release);
  }
  return c.value.load(std::memory_order_relaxed);
}

}  // namespace

#define X(name, var, kind, def, doc) X_##kind(name, var, def)
#define X_Int(name, var, def)                           \
  int64_t name() {                                      \
    static CachedInt c;                                 \
    return getInt(c, [] { return readInt(var, def); }); \
  }
#define X_Str(name, var, def)                           \
  std::string name() {                                  \
    static CachedStr c;                                 \
    return getStr(c, [] { return readStr(var, def); }); \
  }
#include "base/params.def"
#undef X
#undef X_Int
#undef X_Str

namespace {

// True unless `name` is a CHORUS_ variable that params.def does not declare.
bool declared(const char* name) {
  if (strncmp(name, "CHORUS_", 7) != 0) return true;
#define X(n, var, kind, def, doc) \
  if (strcmp(name + 7, var) == 0) return true;
#include "base/params.def"
#undef X
  return false;
}

}  // namespace

std::optional<std::string> text(const char* name) {
  if (!declared(name)) {
    fprintf(stderr, "chorus: %s is read but not declared in src/base/params.def\n", name);
    abort();
  }
  const char* t = std::getenv(name);
  if (t == nullptr) return std::nullopt;
  return std::string(t);
}

void reload() {
  generation.fetch_add(1, std::memory_order_acq_rel);
}

void forEach(const std::function<void(const std::string&, const std::string&, const std::string&)>& fn) {
#define X(name, var, kind, def, doc) fn(std::string("CHORUS_") + var, #def, doc);
#include "base/params.def"
#undef X
}

bool parseSize(const std::string& text, int64_t* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || errno != 0) return false;
  int64_t mult = 1;
  if (*end != '\0') {
    switch (*end) {
      case 'k':
      case 'K': mult = 1LL << 10; break;
      case 'm':
      case 'M': mult = 1LL << 20; break;
      case 'g':
      case 'G': mult = 1LL << 30; break;
      default: return false;
    }
    ++end;
    if (*end == 'B' || *end == 'b') ++end;
    if (*end != '\0') return false;
  }
  *value = static_cast<int64_t>(v) * mult;
  return true;
}

}  // namespace chorus::param
