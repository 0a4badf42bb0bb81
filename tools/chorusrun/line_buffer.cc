#include "line_buffer.h"

namespace chorus::launcher {

void LineBuffer::append(const char* data, size_t n, const Emit& emit) {
  std::string_view in(data, n);
  size_t start = 0;
  for (size_t nl = in.find('\n'); nl != std::string_view::npos; nl = in.find('\n', start)) {
    if (pending_.empty()) {
      emit(in.substr(start, nl - start));
    } else {
      pending_.append(in.substr(start, nl - start));
      emit(pending_);
      pending_.clear();
    }
    start = nl + 1;
  }
  pending_.append(in.substr(start));
}

void LineBuffer::flush(const Emit& emit) {
  if (pending_.empty()) return;
  emit(pending_);
  pending_.clear();
}

}  // namespace chorus::launcher
