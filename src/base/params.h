// Typed, cached environment parameters. Each is declared once in params.def and read through a function of
// the same name: `param::TimeoutMs()` reads CHORUS_TIMEOUT_MS as an integer, or returns the default when the
// variable is unset or malformed (a malformed value is logged once). Values are cached; tests that change
// the environment call param::reload().
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace chorus::param {

#define X(name, var, kind, def, doc) X_##kind(name)
#define X_Int(name) int64_t name();
#define X_Str(name) std::string name();
#include "base/params.def"
#undef X
#undef X_Int
#undef X_Str

// Forgets cached values so that the next read sees the current environment.
void reload();

// Calls fn(variable, default, meaning) for every parameter, in declaration order (for --info and docs).
void forEach(const std::function<void(const std::string&, const std::string&, const std::string&)>& fn);

// Parses "123", "64K", "4M", "1G" (binary units); false on garbage. Exposed for tests and tools.
bool parseSize(const std::string& text, int64_t* value);

}  // namespace chorus::param
