#include "transport/cuda/cuda_descriptor.h"

#include <cstring>

#include "base/error.h"

namespace chorus::transport::cuda {

namespace {

constexpr uint32_t kMagic = 0x43554446;  // "CUDF"
constexpr uint32_t kVersion = 1;
// magic, version, kind, device, processId, pointer, handle, offset, slotBytes, nslots
constexpr size_t kWireBytes = 4 + 4 + 4 + 4 + 8 + 8 + kIpcHandleBytes + 8 + 8 + 4;

template <typename T>
void put(std::vector<uint8_t>* out, const T& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out->insert(out->end(), p, p + sizeof(T));
}

template <typename T>
T get(const std::vector<uint8_t>& in, size_t* off) {
  T v;
  std::memcpy(&v, in.data() + *off, sizeof(T));
  *off += sizeof(T);
  return v;
}

}  // namespace

std::vector<uint8_t> serialize(const DevFifoDescriptor& d) {
  std::vector<uint8_t> out;
  out.reserve(kWireBytes);
  put(&out, kMagic);
  put(&out, kVersion);
  put(&out, static_cast<uint32_t>(d.kind));
  put(&out, d.device);
  put(&out, d.processId);
  put(&out, d.pointer);
  out.insert(out.end(), d.ipcHandle, d.ipcHandle + kIpcHandleBytes);
  put(&out, d.ipcOffset);
  put(&out, d.slotBytes);
  put(&out, d.nslots);
  return out;
}

DevFifoDescriptor parseDevFifoDescriptor(const std::vector<uint8_t>& in) {
  CHORUS_ENFORCE(in.size() == kWireBytes, "CUDA FIFO descriptor of ", in.size(), " bytes, expected ", kWireBytes);
  size_t off = 0;
  CHORUS_ENFORCE(get<uint32_t>(in, &off) == kMagic, "CUDA FIFO descriptor: bad magic (not from a CUDA peer)");
  const uint32_t version = get<uint32_t>(in, &off);
  CHORUS_ENFORCE(version == kVersion, "CUDA FIFO descriptor version ", version, ", expected ", kVersion);
  DevFifoDescriptor d;
  const uint32_t kind = get<uint32_t>(in, &off);
  CHORUS_ENFORCE(kind >= 1 && kind <= 3, "CUDA FIFO descriptor: unknown kind ", kind);
  d.kind = static_cast<DevFifoKind>(kind);
  d.device = get<int32_t>(in, &off);
  d.processId = get<uint64_t>(in, &off);
  d.pointer = get<uint64_t>(in, &off);
  std::memcpy(d.ipcHandle, in.data() + off, kIpcHandleBytes);
  off += kIpcHandleBytes;
  d.ipcOffset = get<uint64_t>(in, &off);
  d.slotBytes = get<uint64_t>(in, &off);
  d.nslots = get<uint32_t>(in, &off);
  CHORUS_ENFORCE(d.slotBytes > 0 && d.nslots > 0, "CUDA FIFO descriptor with an empty geometry");
  CHORUS_ENFORCE(d.kind != DevFifoKind::kDirect || d.pointer != 0, "CUDA FIFO descriptor: direct kind, null pointer");
  return d;
}

}  // namespace chorus::transport::cuda
