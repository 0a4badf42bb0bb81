// A shared library opened with dlopen for as long as the object lives: how chorusrun --info looks at
// optional system libraries (ibverbs, CUDA driver, NVML) that the build does not link.
#pragma once

#include <dlfcn.h>

#include <string>

namespace chorus::launcher {

class DlLibrary {
 public:
  explicit DlLibrary(const char* name) : handle_(dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
    if (handle_ == nullptr) {
      const char* why = dlerror();
      error_ = why != nullptr ? why : std::string(name) + " not found";
    }
  }
  ~DlLibrary() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  DlLibrary(const DlLibrary&) = delete;
  DlLibrary& operator=(const DlLibrary&) = delete;

  bool loaded() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }

  // The symbol as a function pointer of type Fn, or nullptr.
  template <typename Fn>
  Fn symbol(const char* name) const {
    return handle_ != nullptr ? reinterpret_cast<Fn>(dlsym(handle_, name)) : nullptr;
  }

 private:
  void* handle_ = nullptr;
  std::string error_;
};

}  // namespace chorus::launcher
