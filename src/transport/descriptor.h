// Connection descriptors: the bytes a receiving end hands to its sender through the bootstrap. Every
// transport writes a magic number first, so a descriptor given to the wrong transport (ranks that disagree
// on CHORUS_TRANSPORT) is reported instead of misread.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "base/error.h"

namespace chorus::transport {

class DescriptorWriter {
 public:
  explicit DescriptorWriter(std::vector<uint8_t>* out) : out_(out) {}
  template <typename T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    putBytes(&v, sizeof(v));
  }
  void putBytes(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out_->insert(out_->end(), b, b + n);
  }
  void putString(const std::string& s) {
    put(static_cast<uint32_t>(s.size()));
    putBytes(s.data(), s.size());
  }

 private:
  std::vector<uint8_t>* out_;
};

class DescriptorReader {
 public:
  // `transport` names the transport in error messages.
  DescriptorReader(const std::vector<uint8_t>& in, const char* transport) : in_(in), transport_(transport) {}
  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    getBytes(&v, sizeof(v));
    return v;
  }
  void getBytes(void* p, size_t n) {
    CHORUS_CHECK_ARG(n <= in_.size() - pos_, "truncated ", transport_, " connection descriptor (", in_.size(),
                     " bytes)");
    memcpy(p, in_.data() + pos_, n);
    pos_ += n;
  }
  std::string getString() {
    auto n = get<uint32_t>();
    std::string s(n <= in_.size() - pos_ ? n : 0, '\0');
    CHORUS_CHECK_ARG(s.size() == n, "truncated ", transport_, " connection descriptor");
    getBytes(s.data(), n);
    return s;
  }
  // Reads the magic number and checks it.
  void expectMagic(uint32_t magic) {
    CHORUS_CHECK_ARG(in_.size() >= sizeof(magic) && get<uint32_t>() == magic, "the connection descriptor is not a ",
                     transport_, " descriptor (do all ranks use the same CHORUS_TRANSPORT?)");
  }
  void expectEnd() const {
    CHORUS_CHECK_ARG(pos_ == in_.size(), "trailing bytes in ", transport_, " connection descriptor");
  }

 private:
  const std::vector<uint8_t>& in_;
  const char* transport_;
  size_t pos_ = 0;
};

}  // namespace chorus::transport
