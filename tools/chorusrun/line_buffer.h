// Splits a byte stream (a rank's stdout or stderr pipe) into lines for tagging with the rank.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace chorus::launcher {

class LineBuffer {
 public:
  using Emit = std::function<void(std::string_view line)>;

  // Appends bytes and emits every complete line, without its '\n'.
  void append(const char* data, size_t n, const Emit& emit);
  // Emits what is left of an unterminated last line, if anything.
  void flush(const Emit& emit);
  bool empty() const { return pending_.empty(); }

 private:
  std::string pending_;
};

}  // namespace chorus::launcher
