// Typed, cached environment parameters. Each is declared once in params.def and read through a function of
// the same name: `param::TimeoutMs()` reads CHORUS_TIMEOUT_MS as an integer, or returns the default when the
// variable is unset or malformed (a malformed value is logged once). Values are cached; tests that change
// the environment call param::reload().
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
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

// The text of environment variable `name` (the full name, "CHORUS_SPIN_US"), read now, neither cached nor
// logged; nullopt when unset. For callers that parse the text themselves or must know whether a variable is
// set at all, and for logging's own settings (the typed readers log, so logging cannot use them). A CHORUS_
// name must be declared in params.def (an undeclared one aborts: it is a bug); other names are the variables
// of other launchers (RANK, MASTER_ADDR, OMPI_COMM_WORLD_RANK, ...). This file is the only place the library
// reads the environment.
std::optional<std::string> text(const char* name);

// Calls fn(variable, default, meaning) for every parameter, in declaration order (for --info and docs).
void forEach(const std::function<void(const std::string&, const std::string&, const std::string&)>& fn);

// Parses "123", "64K", "4M", "1G" (binary units); false on garbage. Exposed for tests and tools.
bool parseSize(const std::string& text, int64_t* value);

}  // namespace chorus::param
