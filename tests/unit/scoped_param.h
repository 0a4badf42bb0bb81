// A Chorus environment parameter set for one scope of a test (base/params.h caches values: reloaded both ways).
#pragma once

#include <cstdlib>

#include "base/params.h"

namespace chorus {

// Sets the variable `name` (nullptr: unsets it) for the scope, and restores it unset.
class ScopedParam {
 public:
  ScopedParam(const char* name, const char* value) : name_(name) {
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
    param::reload();
  }
  ~ScopedParam() {
    unsetenv(name_);
    param::reload();
  }
  ScopedParam(const ScopedParam&) = delete;
  ScopedParam& operator=(const ScopedParam&) = delete;

 private:
  const char* name_;
};

}  // namespace chorus
