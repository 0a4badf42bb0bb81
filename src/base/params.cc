#include "base/params.h"

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "base/logging.h"

namespace chorus::param {
namespace {

std::atomic<uint64_t> generation{1};

template <typename T>
struct Cached {
  std::mutex mu;
  uint64_t gen = 0;
  T value{};
};

int64_t readInt(const char* var, int64_t def) {
  std::string name = std::string("CHORUS_") + var;
  const char* text = getenv(name.c_str());
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
  const char* text = getenv(name.c_str());
  if (text == nullptr) return def;
  CHORUS_LOG_INFO(kEnv, name, " set by environment to ", text);
  return text;
}

template <typename T, typename Read>
T get(Cached<T>& c, Read read) {
  uint64_t g = generation.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> lock(c.mu);
  if (c.gen != g) {
    c.value = read();
    c.gen = g;
  }
  return c.value;
}

}  // namespace

#define X(name, var, kind, def, doc) X_##kind(name, var, def)
#define X_Int(name, var, def)                        \
  int64_t name() {                                   \
    static Cached<int64_t> c;                        \
    return get(c, [] { return readInt(var, def); }); \
  }
#define X_Str(name, var, def)                        \
  std::string name() {                               \
    static Cached<std::string> c;                    \
    return get(c, [] { return readStr(var, def); }); \
  }
#include "base/params.def"
#undef X
#undef X_Int
#undef X_Str

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
